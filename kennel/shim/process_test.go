package shim

import (
	"go.uber.org/goleak"

	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run the real program on the host: the test binary re-executes
// itself as fetch-shim (TestMain), with a state directory under t.TempDir().

const asMainEnv = "FETCH_SHIM_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

type shimEnv struct {
	t     *testing.T
	state string
}

func newShimEnv(t *testing.T) *shimEnv {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs sh and setsid on the host")
	}
	return &shimEnv{t: t, state: t.TempDir()}
}

// command builds an exec.Cmd running the shim with the state dir; args are the
// command and its flags; argv, if any, follows "--".
func (e *shimEnv) command(args []string, argv ...string) *exec.Cmd {
	full := append([]string{args[0], "--state", e.state}, args[1:]...)
	if len(argv) > 0 {
		full = append(append(full, "--"), argv...)
	}
	cmd := exec.Command(os.Args[0], full...)
	// The race runtime sleeps a second before exiting unless told not to.
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return cmd
}

// run runs the shim to completion and returns stdout, stderr and exit code.
func (e *shimEnv) run(args []string, argv ...string) (string, string, int) {
	e.t.Helper()
	cmd := e.command(args, argv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("run shim %q: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func (e *shimEnv) status(id string) TaskInfo {
	e.t.Helper()
	out, errOut, code := e.run([]string{CmdStatus, "--task", id})
	if code != ExitOK {
		e.t.Fatalf("status %s: exit %d: %s", id, code, errOut)
	}
	var ti TaskInfo
	if err := json.Unmarshal([]byte(out), &ti); err != nil {
		e.t.Fatalf("status %s: %v in %q", id, err, out)
	}
	return ti
}

// start starts a runner for a script and waits until the script prints
// "ready". The returned function waits for the runner and returns its exit code.
func (e *shimEnv) start(id, script string) (wait func() int) {
	e.t.Helper()
	cmd := e.command([]string{CmdRun, "--task", id, "--grace", "400ms"}, "sh", "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	finished := make(chan struct{})
	code := 0
	ready := make(chan struct{})
	go func() {
		defer close(finished)
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if sc.Text() == "ready" && !signalled {
				close(ready)
				signalled = true
			}
		}
		_ = cmd.Wait()
		if !signalled {
			close(ready)
		}
		code = cmd.ProcessState.ExitCode()
	}()
	e.t.Cleanup(func() {
		e.run([]string{CmdStop, "--task", id, "--grace", "100ms"})
		<-finished
	})
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		e.t.Fatalf("task %s never printed ready", id)
	}
	return func() int { <-finished; return code }
}

// tagged lists live processes carrying the task's tag.
func tagged(t *testing.T, id string) []int {
	t.Helper()
	procs, err := scanProcs("/proc")
	if err != nil {
		t.Fatal(err)
	}
	return pidsOf(members(procs, target{tag: id}))
}

func newID(t *testing.T) string {
	return "t" + strings.ToLower(rand.Text()[:12])
}

func TestRunRecordsExitCodeAndLog(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	out, errOut, code := e.run([]string{CmdRun, "--task", id}, "sh", "-c", `echo out1; echo err1 >&2; echo "tag=$FETCH_TASK_ID"; exit 3`)
	if code != 3 {
		t.Fatalf("exit code = %d, want 3 (stderr %q)", code, errOut)
	}
	if want := "out1\ntag=" + id + "\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if errOut != "err1\n" {
		t.Errorf("stderr = %q, want %q", errOut, "err1\n")
	}
	ti := e.status(id)
	if !ti.Known || ti.Running || ti.Exit == nil || ti.Exit.Code != 3 || ti.Exit.Stopped || !ti.HasLog {
		t.Errorf("status = %+v (exit %+v)", ti, ti.Exit)
	}
	logOut, logErr, code := e.run([]string{CmdLog, "--task", id, "--follow"})
	if code != ExitOK || logOut != out || logErr != errOut {
		t.Errorf("log replay = %q / %q (exit %d), want %q / %q", logOut, logErr, code, out, errOut)
	}
}

func TestRunChildIsolation(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	// The child leads its own session and group, and reads /dev/null even
	// though the runner's stdin is a pipe that stays open.
	cmd := e.command([]string{CmdRun, "--task", id}, "sh", "-c", `cat; echo "pid=$$"; ps -o sid=,pgid= -p $$`)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdinW.Close()
	cmd.Stdin = stdinR
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var pid, sid, pgid int
	if _, err := fmt.Sscanf(string(out), "pid=%d\n%d %d", &pid, &sid, &pgid); err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
	if sid != pid || pgid != pid {
		t.Errorf("child pid %d has session %d and group %d, want its own", pid, sid, pgid)
	}
}

func TestRunReportsStartFailures(t *testing.T) {
	e := newShimEnv(t)
	notExec := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(notExec, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv string
		want int
	}{
		{"missing program", "/no/such/program", ExitNotFound},
		{"missing in PATH", "no-such-program-fetch", ExitNotFound},
		{"not executable", notExec, ExitNotExecutable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := newID(t)
			_, errOut, code := e.run([]string{CmdRun, "--task", id}, tt.argv)
			if code != tt.want || !strings.Contains(errOut, "fetch-shim: start") {
				t.Errorf("exit %d stderr %q, want %d and a start error", code, errOut, tt.want)
			}
			if ti := e.status(id); ti.Exit == nil || ti.Exit.Code != tt.want || ti.Exit.Error == "" {
				t.Errorf("status exit = %+v", ti.Exit)
			}
		})
	}
}

func TestStopEndsEveryProcessOfTheTask(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"hanging child", `sleep 600 & echo ready; wait`},
		{"ignores SIGINT", `trap '' INT; sleep 600 & echo ready; wait`},
		{"ignores SIGINT and SIGTERM", `trap '' INT TERM; sleep 600 & echo ready; while :; do wait; done`},
		{"child in its own session", `setsid sleep 600 & echo ready; sleep 600`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newShimEnv(t)
			id := newID(t)
			wait := e.start(id, tt.script)
			if len(tagged(t, id)) < 2 {
				t.Fatalf("task processes before stop: %v", tagged(t, id))
			}
			_, errOut, code := e.run([]string{CmdStop, "--task", id, "--grace", "400ms"})
			if code != ExitOK {
				t.Fatalf("stop: exit %d: %s", code, errOut)
			}
			if left := tagged(t, id); len(left) > 0 {
				t.Errorf("processes left after stop: %v", left)
			}
			ti := e.status(id)
			if ti.Running || ti.Exit == nil || !ti.Exit.Stopped || ti.Exit.Code < 128 {
				t.Errorf("status after stop = %+v, exit %+v", ti, ti.Exit)
			}
			// The runner has released its lock (status says not running),
			// so it is exiting.
			if code := wait(); code != ti.Exit.Code {
				t.Errorf("runner exit %d, recorded %d", code, ti.Exit.Code)
			}
		})
	}
}

func TestStopIsIdempotent(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	stop := func(what string) {
		t.Helper()
		if _, errOut, code := e.run([]string{CmdStop, "--task", id}); code != ExitOK {
			t.Fatalf("stop %s: exit %d: %s", what, code, errOut)
		}
	}
	stop("before the task exists")
	if _, _, code := e.run([]string{CmdRun, "--task", id}, "true"); code != 0 {
		t.Fatalf("run true: exit %d", code)
	}
	stop("after the task ended")
	stop("again")
	if ti := e.status(id); ti.Exit == nil || ti.Exit.Code != 0 || ti.Exit.Stopped {
		t.Errorf("a stop after the end changed the record: %+v", ti.Exit)
	}
}

func TestRunCleansUpLeftoversWhenTheChildEnds(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	_, errOut, code := e.run([]string{CmdRun, "--task", id, "--grace", "200ms"}, "sh", "-c", `setsid sleep 600 & sleep 600 & echo ready`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if left := tagged(t, id); len(left) > 0 {
		t.Errorf("processes left after the task ended: %v", left)
	}
}

func TestRunRefusesABusyTask(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	e.start(id, `echo ready; sleep 600`)
	_, errOut, code := e.run([]string{CmdRun, "--task", id}, "true")
	if code != ExitShimFailed || !strings.Contains(errOut, "already running") {
		t.Errorf("second run: exit %d stderr %q", code, errOut)
	}
	if _, _, code := e.run([]string{CmdForget, "--task", id}); code != ExitBusy {
		t.Errorf("forget of a running task: exit %d, want %d", code, ExitBusy)
	}
	// ps lists every tagged process on the host too, so look for ours.
	out, _, code := e.run([]string{CmdPs})
	if code != ExitOK {
		t.Fatalf("ps: exit %d", code)
	}
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ti TaskInfo
		if err := json.Unmarshal([]byte(line), &ti); err != nil {
			t.Fatalf("ps: %v in %q", err, line)
		}
		if ti.ID == id {
			found = true
			if !ti.Running || ti.PGID == 0 || len(ti.Pids) == 0 {
				t.Errorf("ps = %+v", ti)
			}
		}
	}
	if !found {
		t.Errorf("ps does not list %s: %q", id, out)
	}
}

func TestForgetRemovesAFinishedTask(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	e.run([]string{CmdRun, "--task", id}, "echo", "hi")
	if _, _, code := e.run([]string{CmdForget, "--task", id}); code != ExitOK {
		t.Fatalf("forget: exit %d", code)
	}
	if ti := e.status(id); ti.Known {
		t.Errorf("status after forget = %+v", ti)
	}
	if entries, _ := os.ReadDir(e.state); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

func TestEphemeralRunLeavesNothing(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	out, _, code := e.run([]string{CmdRun, "--task", id, "--ephemeral"}, "echo", "hi")
	if code != 0 || out != "hi\n" {
		t.Fatalf("exit %d stdout %q", code, out)
	}
	if entries, _ := os.ReadDir(e.state); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

func TestFollowStreamsALiveTaskToItsEnd(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	wait := e.start(id, `echo ready; i=0; while [ $i -lt 20 ]; do echo line$i; echo err$i >&2; i=$((i+1)); sleep 0.02; done; exit 7`)
	follow := e.command([]string{CmdLog, "--task", id, "--follow"})
	var out, errOut bytes.Buffer
	follow.Stdout, follow.Stderr = &out, &errOut
	if err := follow.Run(); err != nil {
		t.Fatalf("follow: %v (%s)", err, errOut.String())
	}
	var wantOut, wantErr strings.Builder
	wantOut.WriteString("ready\n")
	for i := range 20 {
		fmt.Fprintf(&wantOut, "line%d\n", i)
		fmt.Fprintf(&wantErr, "err%d\n", i)
	}
	if out.String() != wantOut.String() || errOut.String() != wantErr.String() {
		t.Errorf("follow got\n%q\n%q", out.String(), errOut.String())
	}
	if code := wait(); code != 7 {
		t.Errorf("runner exit %d, want 7", code)
	}
	if ti := e.status(id); ti.Exit == nil || ti.Exit.Code != 7 {
		t.Errorf("status exit = %+v", ti.Exit)
	}
}
