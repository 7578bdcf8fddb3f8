package kennel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// The crash test runs a second copy of this test binary as "Fetch": it starts
// a long task and is killed with SIGKILL. These variables carry the setup to it.
const (
	crashEnvRole     = "KENNEL_TEST_CRASH_ROLE"
	crashEnvImage    = "KENNEL_TEST_CRASH_IMAGE"
	crashEnvInstance = "KENNEL_TEST_CRASH_INSTANCE"
	crashEnvWS       = "KENNEL_TEST_CRASH_WORKSPACE"
	crashEnvTask     = "KENNEL_TEST_CRASH_TASK"
	crashEnvMark     = "KENNEL_TEST_CRASH_MARK"
)

// TestCrashHelperProcess is not a test: it is the controlling process of
// TestReconcileAfterCrash. It prints "running" once the task runs, then waits
// to be killed.
func TestCrashHelperProcess(t *testing.T) {
	if os.Getenv(crashEnvRole) != "fetch" {
		t.Skip("helper process for TestReconcileAfterCrash")
	}
	mark := os.Getenv(crashEnvMark)
	ws := os.Getenv(crashEnvWS)
	// After the crash, once the test opens the gate, the task writes far more
	// than a pipe holds: it must not freeze on output nobody reads (Docker
	// drains an exec's output after its client is gone).
	script := fmt.Sprintf(`echo ready; setsid sleep 6003 &
while [ ! -e %q ]; do sleep 0.05; done
%s flood 4000000
echo flooded
sleep 600`, ws+"/gate", helperPath)
	helperRun(t, kennel.ExecSpec{
		Workspace: ws,
		Argv:      []string{"sh", "-c", script, mark},
		TaskID:    os.Getenv(crashEnvTask),
	})
}

// helperRun is the run of a helper process (a Fetch that the test kills): it
// runs spec in a kennel set up from the crashEnv variables and prints
// "running" once the run prints "ready". The run must not end.
func helperRun(t *testing.T, spec kennel.ExecSpec) {
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{
		Image:    os.Getenv(crashEnvImage),
		Instance: os.Getenv(crashEnvInstance),
		Grace:    testGrace,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Exec(context.Background(), spec, func(s kennel.Stream, line []byte) {
		if string(line) == "ready" {
			fmt.Println("running")
		}
	})
	t.Fatalf("the run ended (%v) but this process should have been killed", err)
}

// startHelper starts a second copy of this test binary running only the test
// helper, with extra added to its environment and e's setup in the crashEnv
// variables, and returns it once it prints "running" (its run started).
func startHelper(t *testing.T, e *env, helper, task string, extra ...string) *exec.Cmd {
	t.Helper()
	fetch := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.v")
	fetch.Env = append(os.Environ(),
		crashEnvImage+"="+e.cfg.Image,
		crashEnvInstance+"="+e.instance,
		crashEnvWS+"="+e.ws,
		crashEnvTask+"="+task,
	)
	fetch.Env = append(fetch.Env, extra...)
	stdout, err := fetch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	fetch.Stderr = os.Stderr
	if err := fetch.Start(); err != nil {
		t.Fatal(err)
	}
	running := make(chan struct{})
	go func() { // ends when the helper's stdout closes (the test kills it)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "running" {
				close(running)
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case <-running:
	case <-time.After(60 * time.Second):
		fetch.Process.Kill()
		t.Fatal("the helper process never started its task")
	}
	return fetch
}

func TestReconcileAfterCrash(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	mark := "mark-" + newTaskID()

	fetch := startHelper(t, e, "TestCrashHelperProcess", task, crashEnvRole+"=fetch", crashEnvMark+"="+mark)
	// Fetch dies without any chance to clean up.
	if err := fetch.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = fetch.Wait()

	// The task lives on in the kennel.
	if left := e.processesMatching(mark); len(left) < 2 {
		t.Fatalf("task processes after the crash: %q (all: %q)", left, e.processes())
	}

	// A new Fetch finds it.
	k := e.newKennel()
	leftovers, err := k.Reconcile(context.Background())
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	var found *kennel.TaskState
	for _, l := range leftovers {
		if l.Workspace != e.ws || l.State != "running" {
			t.Errorf("leftover %+v", l)
			continue
		}
		for i, ts := range l.Tasks {
			if ts.ID == task {
				found = &l.Tasks[i]
			}
		}
	}
	if len(leftovers) != 1 || found == nil {
		t.Fatalf("reconcile found %+v, want the container with task %s", leftovers, task)
	}
	if !found.Running || found.PGID == 0 || len(found.Pids) < 2 || found.Exit != nil {
		t.Errorf("task as reconciled: %+v", found)
	}

	// It goes on, output and all, and can be followed while it runs.
	l := &lines{}
	flooded := l.await("flooded")
	followed := make(chan error, 1)
	go func() {
		_, err := k.Follow(context.Background(), e.ws, task, l.add)
		followed <- err
	}()
	if err := os.WriteFile(filepath.Join(e.ws, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-flooded:
	case err := <-followed:
		t.Fatalf("follow ended before the task did: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the task froze after the crash: its output never reached the log")
	}

	// Stop removes it, the escaped child too.
	if err := k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("left after stop: %q", left)
	}
	if left := e.processesMatching("sleep 6003"); len(left) > 0 {
		t.Errorf("escaped child left after stop: %q", left)
	}
	select {
	case err := <-followed:
		if err != nil {
			t.Errorf("follow: %v", err)
		}
	case <-time.After(stopLimit):
		t.Fatal("follow did not end with the task")
	}
	if out := l.out(); len(out) != 40002 || out[0] != "ready" || out[len(out)-1] != "flooded" {
		t.Errorf("followed %d lines, want ready, 40000 of flood, flooded", len(out))
	}
	ts, err := k.Task(context.Background(), e.ws, task)
	if err != nil || ts.Running || ts.Exit == nil || !ts.Exit.Stopped || len(ts.Pids) > 0 {
		t.Errorf("task after stop: %+v (exit %+v), %v", ts, ts.Exit, err)
	}
}

func TestReconcileReportsStoppedContainers(t *testing.T) {
	e := newEnv(t)
	e.mustExec("true")
	if err := e.docker.ContainerKill(context.Background(), e.containerID(), "KILL"); err != nil {
		t.Fatal(err)
	}
	leftovers, err := e.newKennel().Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(leftovers) != 1 || leftovers[0].Workspace != e.ws || leftovers[0].State != "exited" || len(leftovers[0].Tasks) != 0 {
		t.Errorf("reconcile: %+v", leftovers)
	}
}
