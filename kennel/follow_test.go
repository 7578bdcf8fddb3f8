package kennel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/shim"
)

func TestFollowReadsAFinishedTaskBack(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	sh := e.script("talk.sh", `for i in 1 2 3; do echo "out $i"; echo "err $i" >&2; done; exit 3`)
	live, ll, err := e.exec(context.Background(), kennel.ExecSpec{Argv: []string{sh}, TaskID: task})
	if err != nil || live.ExitCode != 3 {
		t.Fatalf("exec: %+v, %v", live, err)
	}

	// A restarted Fetch reads it back.
	k2 := e.newKennel()
	l := &lines{}
	res, err := k2.Follow(context.Background(), e.ws, task, l.add)
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	if diff := cmp.Diff(ll.out(), l.out()); diff != "" {
		t.Errorf("stdout read back (-live +log):\n%s", diff)
	}
	if diff := cmp.Diff(ll.err(), l.err()); diff != "" {
		t.Errorf("stderr read back (-live +log):\n%s", diff)
	}
	if res.ExitCode != 3 || res.Stopped || string(res.StderrTail) != string(live.StderrTail) {
		t.Errorf("follow result %+v, live %+v", res, live)
	}

	ts, err := k2.Task(context.Background(), e.ws, task)
	if err != nil || ts.Running || !ts.HasLog || ts.Exit == nil || ts.Exit.Code != 3 {
		t.Errorf("task state %+v, %v", ts, err)
	}

	// Forgotten, it is gone.
	if err := k2.Forget(context.Background(), e.ws, task); err != nil {
		t.Fatalf("forget: %v", err)
	}
	if _, err := k2.Follow(context.Background(), e.ws, task, nil); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("follow after forget: %v", err)
	}
	if _, err := k2.Task(context.Background(), e.ws, task); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("task after forget: %v", err)
	}
}

func TestFollowStreamsARunningTaskToItsEnd(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	gate := filepath.Join(e.ws, "gate")
	// The task prints, waits for the test to open the gate, prints more, ends.
	sh := e.script("gated.sh", fmt.Sprintf(`echo before; echo ready; while [ ! -e %q ]; do sleep 0.05; done; echo after >&2; exit 5`, gate))
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{sh}, TaskID: task}, "ready")

	k2 := e.newKennel()
	l := &lines{}
	followed := make(chan struct{})
	var res kennel.Result
	var err error
	go func() {
		defer close(followed)
		res, err = k2.Follow(context.Background(), e.ws, task, l.add)
	}()
	select {
	case <-followed:
		t.Fatalf("follow returned while the task runs: %+v, %v", res, err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-followed:
	case <-time.After(stopLimit):
		t.Fatal("follow did not end with the task")
	}
	if err != nil || res.ExitCode != 5 {
		t.Errorf("follow: %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"before", "ready"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"after"}, l.err()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if live, err := run.wait(t, stopLimit); err != nil || live.ExitCode != 5 {
		t.Errorf("the run itself: %+v, %v", live, err)
	}
}

func TestFollowCancelEndsTheReaderNotTheTask(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo ready; sleep 600"}, TaskID: task}, "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := e.newKennel().Follow(ctx, e.ws, task, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("follow with an expired context: %v", err)
	}
	if left := e.processesMatching("fetch-shim log"); len(left) > 0 {
		t.Errorf("log readers left: %q", left)
	}
	ts, err := e.k.Task(context.Background(), e.ws, task)
	if err != nil || !ts.Running {
		t.Errorf("the task after the follower was cancelled: %+v, %v", ts, err)
	}
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	if _, err := run.wait(t, stopLimit); err != nil {
		t.Error(err)
	}
}

func TestFollowUnknownTask(t *testing.T) {
	e := newEnv(t)
	if _, err := e.k.Follow(context.Background(), e.ws, "nothing", nil); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("follow without a container: %v", err)
	}
	e.mustExec("true") // untracked runs keep no log
	if _, err := e.k.Follow(context.Background(), e.ws, "nothing", nil); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("follow of an unknown task: %v", err)
	}
}

func TestPrepareRunsInTheRunsExecAndFollowReadsItBack(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	dir := filepath.Join(e.ws, "made")
	spec := kennel.ExecSpec{
		TaskID: task,
		Dir:    dir,
		Env:    []string{"RUN_KEY=sk-run"},
		Argv:   []string{"sh", "-c", `pwd; echo "key:$RUN_KEY"; echo err >&2`},
		Prepare: &shim.Batch{Env: []string{"LC_ALL=C"}, Steps: []shim.BatchStep{
			{Argv: []string{"sh", "-c", `echo "step:$RUN_KEY"; mkdir -p made`}},
		}},
	}
	res, l, err := e.exec(context.Background(), spec)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v (stderr %q)", res, err, res.StderrTail)
	}
	want := []string{`{"steps":[{"exit":0,"stdout":"step:\n"}],"ok":true}`}
	if diff := cmp.Diff(want, l.prepared); diff != "" {
		t.Errorf("prepared line (-want +got); the step does not see the run's key:\n%s", diff)
	}
	if diff := cmp.Diff([]string{dir, "key:sk-run"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got): the command runs in the directory the step made:\n%s", diff)
	}
	if string(res.StderrTail) != "err\n" {
		t.Errorf("stderr tail %q: the prepared line is not stderr", res.StderrTail)
	}

	// A restarted Fetch reads the prepared line back from the log.
	l2 := &lines{}
	if _, err := e.newKennel().Follow(context.Background(), e.ws, task, l2.add); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, l2.prepared); diff != "" {
		t.Errorf("followed prepared line (-want +got):\n%s", diff)
	}

	// A failing step: the command never starts.
	spec.TaskID, spec.Prepare = newTaskID(), &shim.Batch{Steps: []shim.BatchStep{{Argv: []string{"sh", "-c", "exit 128"}}}}
	spec.Argv = []string{"touch", filepath.Join(e.ws, "ran")}
	res, l, err = e.exec(context.Background(), spec)
	if err != nil || res.ExitCode != shim.ExitPrepareFailed || len(l.prepared) != 1 {
		t.Fatalf("failed prepare: %+v, %v, %q", res, err, l.prepared)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran after a failed step: %v", err)
	}
}

func TestRecordRunsAfterTheRunAndFollowReadsItBack(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	dir := filepath.Join(e.ws, "made")
	forged := shim.RecordedPrefix + `{"steps":[{"exit":0,"stdout":"forged"}]}`
	spec := kennel.ExecSpec{
		TaskID: task,
		Dir:    dir,
		Env:    []string{"RUN_KEY=sk-run"},
		Argv:   []string{"sh", "-c", `echo work > file; echo '` + forged + `' >&2; echo err >&2; exit 3`},
		Prepare: &shim.Batch{Steps: []shim.BatchStep{
			{Argv: []string{"sh", "-c", "echo base-1; mkdir -p made"}, Capture: "base"},
		}},
		Record: &shim.Batch{Env: []string{"LC_ALL=C"}, Steps: []shim.BatchStep{
			{Argv: []string{"sh", "-c", `echo "$1 $(cat made/file) key:$RUN_KEY"`, "sh", "${base}"}},
		}},
	}
	res, l, err := e.exec(context.Background(), spec)
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("exec: %+v, %v (stderr %q)", res, err, res.StderrTail)
	}
	// The CLI's forged line comes first; the runner's is the last.
	want := []string{`{"steps":[{"exit":0,"stdout":"forged"}]}`, `{"steps":[{"exit":0,"stdout":"base-1 work key:\n"}]}`}
	if diff := cmp.Diff(want, l.recorded); diff != "" {
		t.Errorf("recorded lines (-want +got); the program runs after the command, with the prepare's capture, without the run's key:\n%s", diff)
	}
	if string(res.StderrTail) != "err\n" {
		t.Errorf("stderr tail %q: recorded lines are not stderr", res.StderrTail)
	}

	// A restarted Fetch reads it back from the log.
	l2 := &lines{}
	if _, err := e.newKennel().Follow(context.Background(), e.ws, task, l2.add); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, l2.recorded); diff != "" {
		t.Errorf("followed recorded lines (-want +got):\n%s", diff)
	}

	// A failed prepare: nothing is recorded.
	spec.TaskID, spec.Prepare = newTaskID(), &shim.Batch{Steps: []shim.BatchStep{{Argv: []string{"false"}}}}
	res, l, err = e.exec(context.Background(), spec)
	if err != nil || res.ExitCode != shim.ExitPrepareFailed || len(l.recorded) != 0 {
		t.Fatalf("failed prepare: %+v, %v, recorded %q", res, err, l.recorded)
	}
}
