package journey

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Leaving a task to itself: Ctrl-C during fetch task run --wait leaves the
// task running (it runs in a worker of its own), fetch task log -f follows
// it live to its end, and a second Ctrl-C cancels it.

// until checks cond every pollEvery until it holds, for at most timeout,
// and fails the test with what when it does not.
func until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(pollEvery)
	}
}

// pollEvery is how often until looks: the fetch CLI's output has no
// change notification.
const pollEvery = 100 * time.Millisecond

// ctrlC sends SIGINT to p's process group, as a terminal's Ctrl-C does.
func ctrlC(t testing.TB, p *proc) {
	t.Helper()
	p.ended = true
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("Ctrl-C: %v", err)
	}
}

// exited waits until p ended and returns its exit code.
func exited(t testing.TB, p *proc, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("fetch (pid %d) did not end within %s:\n%s", p.cmd.Process.Pid, within, p.log.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// cancelTwice presses Ctrl-C in fetch task run --wait p, waits for its
// offer to cancel, presses it again and wants exit code 3 (cancelled).
func cancelTwice(t testing.TB, p *proc) {
	t.Helper()
	ctrlC(t, p)
	until(t, waitTimeout, "the offer to cancel with a second Ctrl-C", func() bool {
		return strings.Contains(p.log.String(), "Ctrl-C again within")
	})
	ctrlC(t, p)
	if code := exited(t, p, 2*interruptGrace); code != 3 {
		t.Fatalf("fetch task run --wait exited %d after two Ctrl-C; want 3 (cancelled)\n%s", code, p.log.String())
	}
}

// taskState is fetch task show --json's state of task id.
func (w *world) taskState(id string) string {
	w.t.Helper()
	out, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		w.t.Fatalf("fetch task show: %v\n%s", err, out)
	}
	var st struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("fetch task show --json: %v\n%s", err, out)
	}
	return st.State
}

// runWaiting starts fetch task run --wait on goal in app and returns it
// with its task's id once the task says it works.
func (w *world) runWaiting(goal, working string) (*proc, string) {
	w.t.Helper()
	p := startWatched(w.t, w.environ(), w.watch, "task", "run", "--wait", "--workspace", "app", goal)
	w.t.Cleanup(func() {
		if w.t.Failed() {
			outs, _ := filepath.Glob(filepath.Join(w.data, "tasks", "*.out"))
			for _, f := range outs {
				b, _ := os.ReadFile(f)
				w.t.Logf("task worker output %s:\n%s", f, b)
			}
		}
	})
	var id string
	until(w.t, 3*waitTimeout, "the task to start working (its kennel starts)", func() bool {
		out := p.log.String()
		if m := regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(out); m != nil {
			id = m[1]
		}
		return id != "" && strings.Contains(out, working)
	})
	return p, id
}

func TestJourneyCtrlCLeavesTheTaskRunning(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")

	// One Ctrl-C: the command leaves, the task works on.
	p, id := w.runWaiting("take your time [scenario:slow:30]", "Still working (2/30)")
	ctrlC(t, p)
	if code := exited(t, p, interruptGrace); code != 4 {
		t.Fatalf("fetch task run --wait exited %d after one Ctrl-C; want 4 (left running)\n%s", code, p.log.String())
	}
	out := p.log.String()
	if !strings.Contains(out, "Task "+id+" is still running; follow it with `fetch task log -f "+id+"`, stop it with `fetch task cancel "+id+"`.") {
		t.Errorf("fetch task run --wait did not say how to follow and stop the task it left:\n%s", out)
	}
	if st := w.taskState(id); st != "running" {
		t.Fatalf("after one Ctrl-C the task is %s; want running", st)
	}

	// fetch task log -f follows it from the start to its end.
	f := startWatched(t, w.environ(), w.watch, "task", "log", "-f", id)
	until(t, waitTimeout, "log -f to print the task's steps as they come", func() bool {
		return strings.Contains(f.log.String(), "Still working (")
	})
	if code := exited(t, f, 2*waitTimeout); code != 0 {
		t.Fatalf("fetch task log -f exited %d; want 0 (the task succeeded)\n%s", code, f.log.String())
	}
	f.ended = true
	logged := f.log.String()
	for _, want := range []string{"Still working (30/30)", "✅ Task " + id + " succeeded on app"} {
		if !strings.Contains(logged, want) {
			t.Errorf("fetch task log -f lacks %q:\n%s", want, logged)
		}
	}
	if st := w.taskState(id); st != "succeeded" {
		t.Errorf("the task left running ended %s; want succeeded", st)
	}
	if all, _ := w.fetchCLI("task", "log", id); strings.Contains(all, "shut down") {
		t.Errorf("the task's log says Fetch shut down while it ran, though the owner only left it:\n%s", all)
	}

	// Two Ctrl-C: the task is cancelled, and the command says so.
	p, id = w.runWaiting("take your time [scenario:slow:120]", "Still working (2/120)")
	cancelTwice(t, p)
	if out := p.log.String(); !strings.Contains(out, "Cancelling task "+id) || !strings.Contains(out, "Task "+id+" was cancelled on app") {
		t.Errorf("fetch task run --wait did not say it cancelled the task:\n%s", out)
	}
	if st := w.taskState(id); st != "cancelled" {
		t.Errorf("after two Ctrl-C the task is %s; want cancelled", st)
	}
}
