package testkit

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// DockerProxy is a second socket path to the local Docker engine: a Unix
// socket that forwards every connection, byte for byte, to the engine's
// own socket. Pointing DOCKER_HOST at Host proves that a program finds
// its engine the way the docker CLI does; Conns counts the connections
// that came through.
type DockerProxy struct {
	// Host is the DOCKER_HOST value, unix:///…/docker.sock.
	Host string
	// Path is the socket's path.
	Path  string
	conns atomic.Int64

	mu       sync.Mutex
	requests []string
}

// requestLine matches an HTTP/1.1 request line of the Docker API.
var requestLine = regexp.MustCompile(`^(GET|HEAD|POST|PUT|DELETE) (/\S*) HTTP/1\.1\r?$`)

// Requests are the request lines ("POST /v1.41/containers/create?…")
// that came through, in order.
func (p *DockerProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Saw reports whether a request whose line contains s came through.
func (p *DockerProxy) Saw(s string) bool {
	for _, r := range p.Requests() {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// requestWriter notes the request lines of the stream written to it (the
// client's side of one connection). Lines longer than its buffer are
// dropped, not split.
type requestWriter struct {
	p    *DockerProxy
	line []byte
}

func (w *requestWriter) Write(b []byte) (int, error) {
	for _, c := range b {
		if c != '\n' {
			if len(w.line) < 8<<10 {
				w.line = append(w.line, c)
			}
			continue
		}
		if m := requestLine.FindSubmatch(w.line); m != nil {
			w.p.mu.Lock()
			w.p.requests = append(w.p.requests, string(m[1])+" "+string(m[2]))
			w.p.mu.Unlock()
		}
		w.line = w.line[:0]
	}
	return len(b), nil
}

// Conns is the number of connections accepted so far.
func (p *DockerProxy) Conns() int64 { return p.conns.Load() }

// NewDockerProxy starts a proxy in a new directory that every user may
// enter; the socket is mode 0660 and belongs to the group of the engine's
// socket (like /var/run/docker.sock), so that a user in that group may use
// it. The test's cleanup stops it.
func NewDockerProxy(t testing.TB) *DockerProxy {
	t.Helper()
	RequireDocker(t)
	target := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		if !strings.HasPrefix(h, "unix://") {
			t.Skipf("testkit: DOCKER_HOST %s is not a Unix socket", h)
		}
		target = strings.TrimPrefix(h, "unix://")
	}
	st, err := os.Stat(target)
	if err != nil {
		t.Fatalf("testkit: docker proxy: %v", err)
	}
	dir, err := os.MkdirTemp("", "fetch-docker-proxy-")
	if err != nil {
		t.Fatalf("testkit: docker proxy: %v", err)
	}
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "docker.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("testkit: docker proxy: %v", err)
	}
	os.Chmod(path, 0o660)
	if gid, ok := fileGID(st); ok && os.Geteuid() == 0 {
		os.Chown(path, 0, gid)
	}
	p := &DockerProxy{Host: "unix://" + path, Path: path}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	track := func(c net.Conn, add bool) {
		mu.Lock()
		defer mu.Unlock()
		if add {
			open[c] = struct{}{}
		} else {
			delete(open, c)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			up, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			track(c, true)
			track(up, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				pipe(c, up, &requestWriter{p: p})
				track(c, false)
				track(up, false)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		os.RemoveAll(dir)
	})
	return p
}

// pipe copies both ways until either side ends, then closes both; what a
// sends also goes to seen.
func pipe(a, b net.Conn, seen io.Writer) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn, tee io.Writer) {
		var r io.Reader = src
		if tee != nil {
			r = io.TeeReader(src, tee)
		}
		_, err := io.Copy(dst, r)
		if u, ok := dst.(*net.UnixConn); ok && err == nil {
			// Half-close: the other direction may still be talking
			// (exec streams after stdin ended).
			u.CloseWrite()
		} else {
			a.Close()
			b.Close()
		}
		done <- struct{}{}
	}
	go cp(b, a, seen)
	go cp(a, b, nil)
	<-done
	<-done
	a.Close()
	b.Close()
}

// fileGID is the group owning the file st describes.
func fileGID(st os.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Gid), true
	}
	return 0, false
}
