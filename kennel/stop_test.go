package kennel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// stopLimit is a generous bound on how long a stop may take here: the grace,
// plus Docker's exec round trips on a busy machine. Speed itself is measured
// by BenchmarkStop, not asserted.
const stopLimit = testGrace + 10*time.Second

func TestStopEndsTheTaskAndItsChildren(t *testing.T) {
	tests := []struct {
		name string
		argv func(e *env, mark string) []string
	}{
		{"hanging children", func(e *env, mark string) []string {
			return []string{e.script("hang.sh", "sleep 6001 & sleep 6002 & echo ready; wait # "+mark), mark}
		}},
		{"ignores SIGINT, child in its own session", func(e *env, mark string) []string {
			return []string{helperPath, "stubborn", mark}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			mark := "mark-" + newTaskID()
			task := newTaskID()
			run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: tt.argv(e, mark), TaskID: task}, "ready")
			if n := len(e.processesMatching(mark)) + len(e.processesMatching("sleep 600")); n < 2 {
				t.Fatalf("task not running as expected: %q", e.processes())
			}

			start := time.Now()
			if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
				t.Fatalf("stop: %v", err)
			}
			took := time.Since(start)
			t.Logf("stop took %v", took)
			if left := append(e.processesMatching(mark), e.processesMatching("sleep 600")...); len(left) > 0 {
				t.Errorf("left after stop: %q", left)
			}
			if took > stopLimit {
				t.Errorf("stop took %v", took)
			}
			res, err := run.wait(t, stopLimit)
			if err != nil {
				t.Errorf("a stopped run is a result, not an error: %v", err)
			}
			if !res.Stopped || res.TimedOut || res.ExitCode < 128 {
				t.Errorf("result %+v, want stopped by a signal", res)
			}

			// Stopping again, or after the end, is fine.
			for range 2 {
				if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
					t.Errorf("second stop: %v", err)
				}
			}
		})
	}
}

func TestStopOfUnknownOrEndedTasks(t *testing.T) {
	e := newEnv(t)
	// No container yet: nothing to stop, and none is created for it.
	if err := e.k.Stop(context.Background(), e.ws, "never-ran"); err != nil {
		t.Errorf("stop without a container: %v", err)
	}
	if n := len(e.containers()); n != 0 {
		t.Errorf("stop created %d containers", n)
	}
	task := newTaskID()
	if _, _, err := e.exec(context.Background(), kennel.ExecSpec{Argv: []string{"true"}, TaskID: task}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"never-ran", task, task} {
		if err := e.k.Stop(context.Background(), e.ws, id); err != nil {
			t.Errorf("stop %s: %v", id, err)
		}
	}
	ts, err := e.k.Task(context.Background(), e.ws, task)
	if err != nil || ts.Exit == nil || ts.Exit.Code != 0 || ts.Exit.Stopped {
		t.Errorf("a stop after the end changed the task: %+v, %v", ts, err)
	}
	if err := e.k.Stop(context.Background(), e.ws, "bad/id"); !errors.Is(err, kennel.ErrInvalid) {
		t.Errorf("stop with a bad id: %v", err)
	}

	// The container died (and took its tasks with it) since the kennel last
	// saw it: stopping is still fine, and the task is unknown now.
	if err := e.docker.ContainerKill(context.Background(), e.containerID(), "KILL"); err != nil {
		t.Fatal(err)
	}
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Errorf("stop in a dead container: %v", err)
	}
	if _, err := e.k.Task(context.Background(), e.ws, task); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("task in a dead container: %v", err)
	}
}

func TestTimeoutStopsLikeStop(t *testing.T) {
	e := newEnv(t)
	mark := "mark-" + newTaskID()
	start := time.Now()
	res, _, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:    []string{helperPath, "stubborn", mark},
		Timeout: 500 * time.Millisecond,
	})
	if !errors.Is(err, kennel.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if !res.TimedOut || !res.Stopped || res.ExitCode < 128 {
		t.Errorf("result %+v", res)
	}
	if took := time.Since(start); took > stopLimit {
		t.Errorf("timed-out run took %v", took)
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("left after the timeout: %q", left)
	}
}

func TestCancelStopsTheRun(t *testing.T) {
	e := newEnv(t)
	mark := "mark-" + newTaskID()
	errUser := errors.New("owner said stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	run := e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{helperPath, "stubborn", mark}, TaskID: newTaskID()}, "ready")
	cancel(errUser)
	res, err := run.wait(t, stopLimit)
	if !errors.Is(err, errUser) {
		t.Errorf("err = %v, want the cancellation cause", err)
	}
	if !res.Stopped || res.TimedOut || res.ExitCode < 128 {
		t.Errorf("result %+v", res)
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("left after the cancellation: %q", left)
	}
}

func TestCancelRightAfterStart(t *testing.T) {
	// A cancellation racing the wrapper's start must still stop the run.
	e := newEnv(t)
	e.mustExec("true") // the container exists: the race is with the exec, not the create
	for i := range 5 {
		mark := "mark-" + newTaskID()
		ctx, cancel := context.WithCancel(context.Background())
		l := &lines{}
		time.AfterFunc(time.Duration(i)*5*time.Millisecond, cancel)
		res, err := e.k.Exec(ctx, kennel.ExecSpec{Workspace: e.ws, Argv: []string{helperPath, "stubborn", mark}}, l.add)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("attempt %d: err = %v (result %+v)", i, err, res)
		}
		if left := e.processesMatching(mark); len(left) > 0 {
			t.Errorf("attempt %d: left after the cancellation: %q", i, left)
		}
	}
}

func TestExecRefusesATaskAlreadyRunning(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo ready; sleep 600"}, TaskID: task}, "ready")
	_, _, err := e.exec(context.Background(), kennel.ExecSpec{Argv: []string{"true"}, TaskID: task})
	if !errors.Is(err, kennel.ErrTaskRunning) {
		t.Errorf("second run of a running task: %v", err)
	}
	// Also from another Kennel (a second Fetch): the shim refuses it.
	k2 := e.newKennel()
	res, err := k2.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, TaskID: task}, nil)
	if err != nil || res.ExitCode != 125 {
		t.Errorf("run of a running task from another kennel: %+v, %v", res, err)
	}
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	if _, err := run.wait(t, stopLimit); err != nil {
		t.Error(err)
	}
}
