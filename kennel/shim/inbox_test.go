package shim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// inboxRun is a runner started with --inbox whose stdout lines are collected.
type inboxRun struct {
	mu    sync.Mutex
	lines []string
	seen  map[string]chan struct{}
	done  chan struct{}
	code  int
}

// startInbox runs script under the shim with --inbox and waits for "ready".
func (e *shimEnv) startInbox(id, script string, flags ...string) *inboxRun {
	e.t.Helper()
	args := append([]string{CmdRun, "--task", id, "--grace", "400ms"}, flags...)
	cmd := e.command(args, "sh", "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	r := &inboxRun{done: make(chan struct{}), seen: make(map[string]chan struct{})}
	ready := r.await("ready")
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { // ends with the runner's stdout
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			if ch, ok := r.seen[sc.Text()]; ok {
				close(ch)
				delete(r.seen, sc.Text())
			}
			r.mu.Unlock()
		}
		_ = cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
	}()
	e.t.Cleanup(func() {
		e.run([]string{CmdStop, "--task", id, "--grace", "100ms"})
		<-r.done
	})
	select {
	case <-ready:
	case <-r.done:
		e.t.Fatalf("task %s ended before ready: %q", id, r.out())
	case <-time.After(10 * time.Second):
		e.t.Fatalf("task %s never printed ready", id)
	}
	return r
}

func (r *inboxRun) await(line string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan struct{})
	r.seen[line] = ch
	return ch
}

func (r *inboxRun) out() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

func (r *inboxRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end")
		return -1
	}
}

// send runs fetch-shim send with msg on its stdin.
func (e *shimEnv) send(id string, msg []byte, flags ...string) (string, int) {
	e.t.Helper()
	cmd := e.command(append([]string{CmdSend, "--task", id}, flags...))
	cmd.Stdin = bytes.NewReader(msg)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("send: %v", err)
	}
	return errOut.String(), cmd.ProcessState.ExitCode()
}

func (e *shimEnv) mustSend(id string, msg string, flags ...string) {
	e.t.Helper()
	if errOut, code := e.send(id, []byte(msg), flags...); code != ExitOK {
		e.t.Fatalf("send %q: exit %d: %s", msg, code, errOut)
	}
}

const echoLoop = `echo ready; while read -r l; do echo "got:$l"; done; echo eof`

func TestInboxDeliversMessagesInOrderThenEOF(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	r := e.startInbox(id, echoLoop, "--inbox")
	fi, err := os.Stat(e.state + "/" + id + inSuffix)
	if err != nil || fi.Mode().Type() != fs.ModeNamedPipe || fi.Mode().Perm() != 0o600 {
		t.Fatalf("inbox file: %v, %v", fi, err)
	}
	got2 := r.await("got:two")
	e.mustSend(id, "one\n")
	e.mustSend(id, "two\n")
	<-got2
	// Nothing ends the input but close: the child is still reading.
	if ti := e.status(id); !ti.Running {
		t.Fatalf("the task ended before close: %+v", ti)
	}
	e.mustSend(id, "three\n", "--close")
	if code := r.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	if diff := cmp.Diff([]string{"ready", "got:one", "got:two", "got:three", "eof"}, r.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	for _, s := range []string{inSuffix, ctlSuffix} {
		if _, err := os.Stat(e.state + "/" + id + s); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after the run: %v", s, err)
		}
	}
	if errOut, code := e.send(id, []byte("late\n")); code != ExitNoTask {
		t.Errorf("send to an ended task: exit %d (%s), want %d", code, errOut, ExitNoTask)
	}
	// The log has it all, as without --inbox.
	logOut, _, code := e.run([]string{CmdLog, "--task", id})
	if code != ExitOK || logOut != "ready\ngot:one\ngot:two\ngot:three\neof\n" {
		t.Errorf("log: %q (exit %d)", logOut, code)
	}
}

func TestInboxCloseRefusesLaterSends(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	// The child keeps running after its input ended.
	r := e.startInbox(id, `echo ready; while read -r l; do echo "got:$l"; done; echo eof; sleep 600`, "--inbox")
	eof := r.await("eof")
	e.mustSend(id, "", "--close")
	<-eof
	if errOut, code := e.send(id, []byte("after\n")); code != ExitNoInput {
		t.Errorf("send after close: exit %d (%s), want %d", code, errOut, ExitNoInput)
	}
	e.mustSend(id, "", "--close") // closing again is fine
	e.run([]string{CmdStop, "--task", id, "--grace", "100ms"})
	r.wait(t)
	if slices.Contains(r.out(), "got:after") {
		t.Errorf("a message sent after close reached the child: %q", r.out())
	}
}

func TestSendRefusals(t *testing.T) {
	e := newShimEnv(t)
	plain := newID(t)
	e.start(plain, "echo ready; sleep 600")
	closed := newID(t)
	e.startInbox(closed, "exec 0<&-; echo ready; sleep 600", "--inbox")
	inbox := newID(t)
	e.startInbox(inbox, echoLoop, "--inbox")

	tests := []struct {
		name  string
		id    string
		msg   []byte
		flags []string
		want  int
	}{
		{"unknown task", "nothing", []byte("x\n"), nil, ExitNoTask},
		{"task without inbox", plain, []byte("x\n"), nil, ExitNoInput},
		{"child closed its stdin", closed, []byte("x\n"), nil, ExitNoInput},
		{"too large", inbox, bytes.Repeat([]byte("x"), 2<<20), nil, ExitTooLarge},
		{"empty", inbox, nil, nil, ExitTooLarge},
		{"bad timeout", inbox, []byte("x\n"), []string{"--timeout", "0s"}, ExitUsage},
		{"close of an unknown task", "nothing", nil, []string{"--close"}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errOut, code := e.send(tt.id, tt.msg, tt.flags...)
			if code != tt.want {
				t.Errorf("exit %d (%s), want %d", code, errOut, tt.want)
			}
			if code != ExitOK && !strings.Contains(errOut, "fetch-shim: send") {
				t.Errorf("stderr %q does not say what failed", errOut)
			}
		})
	}
}

func TestConcurrentSendsDoNotInterleave(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	// The child reads only after a while: the senders compete for room.
	r := e.startInbox(id, "echo ready; sleep 0.5; cat", "--inbox")
	const senders = 8
	// Lines far larger than PIPE_BUF, which a pipe does not keep whole.
	msgs := make([]string, senders)
	for i := range msgs {
		msgs[i] = strings.Repeat(string(rune('a'+i)), 200<<10)
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			if errOut, code := e.send(id, []byte(m+"\n")); code != ExitOK {
				t.Errorf("send: exit %d: %s", code, errOut)
			}
		})
	}
	wg.Wait()
	e.mustSend(id, "", "--close")
	r.wait(t)
	got := r.out()[1:]
	if len(got) != senders {
		t.Fatalf("got %d lines, want %d", len(got), senders)
	}
	for _, l := range got {
		if !slices.Contains(msgs, l) {
			t.Errorf("a line of %d bytes is not one of the messages (starts %q)", len(l), l[:min(len(l), 20)])
		}
	}
}

func TestSendTimesOutOnAChildThatDoesNotRead(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	e.startInbox(id, "echo ready; sleep 600", "--inbox")
	// Fill the pipe: whatever its size, at most MaxMessage.
	fill := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; ; i++ {
		errOut, code := e.send(id, fill, "--timeout", "200ms")
		if code == ExitStalled {
			if !strings.Contains(errOut, "not reading") {
				t.Errorf("stalled send says %q", errOut)
			}
			break
		}
		if code != ExitOK || i > MaxMessage/len(fill)+1 {
			t.Fatalf("send %d: exit %d: %s", i, code, errOut)
		}
	}
}

func TestStopEndsABlockedSend(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	r := e.startInbox(id, "echo ready; sleep 600", "--inbox")
	fill := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; ; i++ {
		_, code := e.send(id, fill, "--timeout", "100ms")
		if code == ExitStalled {
			break
		}
		if code != ExitOK || i > MaxMessage/len(fill)+1 {
			t.Fatalf("send %d: exit %d", i, code)
		}
	}
	sent := make(chan int, 1)
	go func() {
		_, code := e.send(id, []byte("blocked\n"), "--timeout", "1h")
		sent <- code
	}()
	time.Sleep(100 * time.Millisecond) // let it block; it would for an hour
	if _, errOut, code := e.run([]string{CmdStop, "--task", id, "--grace", "100ms"}); code != ExitOK {
		t.Fatalf("stop: exit %d: %s", code, errOut)
	}
	select {
	case code := <-sent:
		if code != ExitNoTask {
			t.Errorf("blocked send after stop: exit %d, want %d", code, ExitNoTask)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked send did not end with the task")
	}
	r.wait(t)
	if _, err := os.Stat(e.state + "/" + id + inSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("inbox left after stop: %v", err)
	}
}

func TestRunRefusesStdinWithInbox(t *testing.T) {
	e := newShimEnv(t)
	_, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--stdin", "--inbox"}, "true")
	if code != ExitShimFailed || !strings.Contains(errOut, "exclude") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestForgetRemovesTheInbox(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	// A runner killed outright leaves its FIFOs; forget clears them.
	cmd := e.command([]string{CmdRun, "--task", id, "--inbox"}, "sh", "-c", "echo ready; sleep 600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	e.run([]string{CmdStop, "--task", id, "--grace", "100ms"}) // the orphaned child
	if errOut, code := e.send(id, []byte("x\n")); code != ExitNoTask {
		t.Errorf("send to a task whose runner was killed: exit %d (%s)", code, errOut)
	}
	if _, errOut, code := e.run([]string{CmdForget, "--task", id}); code != ExitOK {
		t.Fatalf("forget: %d %s", code, errOut)
	}
	entries, _ := os.ReadDir(e.state)
	if len(entries) != 0 {
		t.Errorf("files left: %v", fmt.Sprint(entries))
	}
}

func TestSendWaitsForTheInboxLock(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	r := e.startInbox(id, echoLoop, "--inbox")
	// Another sender holds the inbox.
	f, err := os.OpenFile(e.state+"/"+id+inSuffix, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if errOut, code := e.send(id, []byte("while locked\n"), "--timeout", "200ms"); code != ExitStalled {
		t.Errorf("send while the inbox is locked: exit %d (%s), want %d", code, errOut, ExitStalled)
	}
	sent := make(chan int, 1)
	go func() {
		_, code := e.send(id, []byte("after unlock\n"))
		sent <- code
	}()
	select {
	case code := <-sent:
		t.Fatalf("send returned %d while the inbox is locked", code)
	case <-time.After(200 * time.Millisecond):
	}
	got := r.await("got:after unlock")
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if code := <-sent; code != ExitOK {
		t.Errorf("send after unlock: exit %d", code)
	}
	<-got
	if slices.Contains(r.out(), "got:while locked") {
		t.Errorf("the timed-out message was delivered: %q", r.out())
	}
}

func TestInboxArgv(t *testing.T) {
	got := RunArgv("t1", RunOptions{Inbox: true}, []string{"cat"})
	if diff := cmp.Diff([]string{Path, CmdRun, "--task", "t1", "--inbox", "--", "cat"}, got); diff != "" {
		t.Errorf("RunArgv (-want +got):\n%s", diff)
	}
	got = SendArgv("t1", true, 3*time.Second)
	if diff := cmp.Diff([]string{Path, CmdSend, "--task", "t1", "--timeout", "3s", "--close"}, got); diff != "" {
		t.Errorf("SendArgv (-want +got):\n%s", diff)
	}
}
