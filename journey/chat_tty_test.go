package journey

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// J12: fetch chat typed at a terminal (a pseudo-terminal from script(1),
// which Debian always has): while the model hangs, a typed /stop is read
// and answered at once, and /status after it. On the base commit the
// terminal read nothing while a turn ran, so the stop waited for the
// model.
func TestJourneyChatStopWhileTheModelHangs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	arrived := make(chan struct{}, 1)
	w.llm.Script(testkit.Step{Delay: 10 * time.Minute, Text: "too late", Arrived: arrived})
	stdin, out := ttyChat(t, w)
	wait := func(what, s string, within time.Duration) {
		t.Helper()
		deadline := time.NewTimer(within)
		defer deadline.Stop()
		for !strings.Contains(out.String(), s) {
			select {
			case <-out.changed:
			case <-deadline.C:
				t.Fatalf("waited %s for %s (%q); fetch chat printed:\n%s", within, what, s, out.String())
			}
		}
	}
	io.WriteString(stdin, "add a health endpoint to the app workspace\r")
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("the request never reached the model; fetch chat printed:\n%s", out.String())
	}
	sent := time.Now()
	io.WriteString(stdin, "/stop\r")
	// A functional promise (a stop is answered at once), not a benchmark:
	// see stopWithin.
	wait("the stop's reply", "Stopped.", within(time.Second))
	t.Logf("stop answered after about %s", time.Since(sent).Round(time.Millisecond))
	io.WriteString(stdin, "/status\r")
	wait("the /status reply", "Task: ", 30*time.Second)
}

// ttyChat runs the world's fetch chat on a new pseudo-terminal (script(1),
// which copies our stdin to it and its output to ours) until the test
// ends, and returns its input and its output so far.
func ttyChat(t *testing.T, w *world) (io.Writer, *syncBuffer) {
	t.Helper()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a pseudo-terminal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, scriptBin, "-q", "-e", "-c", fetchBinary(t)+" chat", "/dev/null")
	cmd.Env = append(w.environ(), "TERM=dumb")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	out := &syncBuffer{changed: make(chan struct{}, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
		cancel()
	})
	return stdin, out
}

// syncBuffer is a buffer written by one goroutine and read by the test;
// changed fires after writes.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
