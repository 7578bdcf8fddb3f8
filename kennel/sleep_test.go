package kennel_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// testIdle is the idle time of the sleep tests: short, so that they are
// quick; they wait on conditions, never on it.
const testIdle = 300 * time.Millisecond

// wsContainers lists the workspace's containers (any state).
func (e *env) wsContainers() []string {
	e.t.Helper()
	var ids []string
	for _, c := range e.containers() {
		if c.Labels[kennel.LabelWorkspace] == e.ws {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// sleepUntil runs k.Sleep until it puts the env's workspace to sleep, and
// fails the test if that does not happen within limit.
func (e *env) sleepUntil(k *kennel.Kennel, idle, limit time.Duration) {
	e.t.Helper()
	ctx := e.t.Context()
	deadline := time.Now().Add(limit)
	for {
		slept, err := k.Sleep(ctx, idle, e.ws)
		if err != nil {
			e.t.Fatalf("Sleep: %v", err)
		}
		if slices.Contains(slept, e.ws) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the kennel was not put to sleep within %v", limit)
		}
		select {
		case <-ctx.Done():
			e.t.Fatal(ctx.Err())
		case <-time.After(kennel.SleepInterval(idle)):
		}
	}
}

// An idle kennel is put to sleep (its container removed) once it has been
// idle for the idle time, and no sooner; a read that must not wake it
// finds it asleep and starts nothing; the next run starts a new container
// and works.
func TestSleepStopsAnIdleKennelAndARunWakesIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	task := newTaskID()
	if res, _, err := e.exec(ctx, kennel.ExecSpec{TaskID: task, Argv: []string{"echo", "tracked"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("tracked run: %+v, %v", res, err)
	}
	first := e.wsContainers()
	if len(first) != 1 {
		t.Fatalf("containers after a run: %v; want one", first)
	}
	// Just used: not idle, even with the run's log unread.
	if slept, err := e.k.Sleep(ctx, time.Hour, e.ws); err != nil || len(slept) != 0 {
		t.Fatalf("Sleep right after a run: %v, %v; want nothing put to sleep", slept, err)
	}
	if res, l, err := e.exec(ctx, kennel.ExecSpec{IfRunning: true, Argv: []string{"echo", "awake"}}); err != nil || res.ExitCode != 0 || !slices.Equal(l.out(), []string{"awake"}) {
		t.Fatalf("IfRunning in a running kennel: %+v, %q, %v", res, l.out(), err)
	}

	// The kennels of workspaces elsewhere (another Fetch's, which may use
	// the same instance name) are not this one's to stop.
	if slept, err := e.k.Sleep(ctx, time.Nanosecond, filepath.Join(e.ws, "elsewhere")); err != nil || len(slept) != 0 {
		t.Fatalf("Sleep of another root: %v, %v; want nothing put to sleep", slept, err)
	}
	if _, err := e.k.Sleep(ctx, time.Nanosecond, "relative"); !errors.Is(err, kennel.ErrInvalid) {
		t.Fatalf("Sleep of a relative root: %v; want ErrInvalid", err)
	}
	e.sleepUntil(e.k, testIdle, time.Minute)
	if ids := e.wsContainers(); len(ids) != 0 {
		t.Fatalf("containers after the kennel was put to sleep: %v; want none", ids)
	}

	// Reads that must not wake it do not.
	if _, _, err := e.exec(ctx, kennel.ExecSpec{IfRunning: true, Argv: []string{"echo", "x"}}); !errors.Is(err, kennel.ErrAsleep) {
		t.Fatalf("IfRunning in a sleeping kennel: %v; want ErrAsleep", err)
	}
	if _, err := e.k.Task(ctx, e.ws, task); !errors.Is(err, kennel.ErrNoTask) {
		t.Fatalf("Task in a sleeping kennel: %v; want ErrNoTask", err)
	}
	if err := e.k.Stop(ctx, e.ws, task); err != nil {
		t.Fatalf("Stop in a sleeping kennel: %v", err)
	}
	if ids := e.wsContainers(); len(ids) != 0 {
		t.Fatalf("containers after reads of a sleeping kennel: %v; want none", ids)
	}

	// A run wakes it.
	res, l := e.mustExec("echo", "woken")
	if res.ExitCode != 0 || !slices.Equal(l.out(), []string{"woken"}) {
		t.Fatalf("run after the sleep: %+v, %q", res, l.out())
	}
	again := e.wsContainers()
	if len(again) != 1 || again[0] == first[0] {
		t.Fatalf("containers after the run: %v (before the sleep: %v); want one new one", again, first)
	}
}

// A kennel with a run going on is never put to sleep, however long the run.
func TestSleepKeepsABusyKennel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	task := newTaskID()
	b := e.start(ctx, e.k, kennel.ExecSpec{TaskID: task, Argv: []string{"sh", "-c", "echo ready; exec sleep 600"}}, "ready")
	// A Kennel of another Fetch sees the run only in the engine and the
	// shim.
	other := e.newKennel()
	began := time.Now()
	for time.Since(began) < 4*testIdle {
		for _, k := range []*kennel.Kennel{e.k, other} {
			if slept, err := k.Sleep(ctx, testIdle, e.ws); err != nil || len(slept) != 0 {
				t.Fatalf("Sleep during a run: %v, %v; want nothing put to sleep", slept, err)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(kennel.SleepInterval(testIdle)):
		}
	}
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	if res, _ := b.wait(t, time.Minute); !res.Stopped {
		t.Fatalf("run after Stop: %+v; want stopped", res)
	}
	if err := e.k.Forget(ctx, e.ws, task); err != nil {
		t.Fatal(err)
	}
	e.sleepUntil(other, testIdle, time.Minute)
}

// The race of a stop with a new run: a run that arrives while the kennel is
// being put to sleep waits for it and gets a new container, or keeps the
// kennel awake; it never fails, and the workspace never has more than one
// container (none when the sleep comes after the run). The runs start at varied moments of the sleep (which looks at
// the engine and the shim before it removes the container), so that each
// order is met.
func TestSleepRacingARunNeverFailsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.mustExec("true")
	var slept, kept int
	// The runs start from the beginning of a sleep to a little after its
	// end, however long a sleep takes on this machine (the longest seen).
	longest := 500 * time.Millisecond
	for i := range 8 {
		offset := longest * time.Duration(i) / 6
		start := make(chan struct{})
		var wg sync.WaitGroup
		var sleptWS []string
		var sleepErr error
		var took time.Duration
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			began := time.Now()
			sleptWS, sleepErr = e.k.Sleep(ctx, time.Nanosecond, e.ws)
			took = time.Since(began)
		}()
		var res kennel.Result
		var out []string
		var execErr error
		want := fmt.Sprint("run ", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			select {
			case <-time.After(offset):
			case <-ctx.Done():
				return
			}
			var l *lines
			res, l, execErr = e.exec(ctx, kennel.ExecSpec{Argv: []string{"echo", want}})
			if l != nil {
				out = l.out()
			}
		}()
		close(start)
		wg.Wait()
		if sleepErr != nil {
			t.Fatalf("iteration %d: Sleep: %v", i, sleepErr)
		}
		if execErr != nil || res.ExitCode != 0 || !slices.Equal(out, []string{want}) {
			t.Fatalf("iteration %d (run %v after the sleep began): run %+v, %q, %v; want it to succeed", i, offset, res, out, execErr)
		}
		// One container, or none when the sleep came after the run.
		if ids := e.wsContainers(); len(ids) > 1 {
			t.Fatalf("iteration %d: containers %v; want one at most", i, ids)
		}
		if slices.Contains(sleptWS, e.ws) {
			slept++
		} else {
			kept++
		}
		longest = max(longest, took)
	}
	t.Logf("put to sleep %d times, kept awake by the run %d times (the longest sleep took %v)", slept, kept, longest)
	if slept == 0 || kept == 0 {
		t.Errorf("the runs met only one order (put to sleep %d times, kept %d times); want both", slept, kept)
	}
	// The Kennel still sleeps and wakes as before.
	e.sleepUntil(e.k, time.Nanosecond, time.Minute)
	e.mustExec("true")
}

// A run of a Kennel whose container another Fetch put to sleep works: it
// finds the container gone and starts a new one.
func TestSleepByAnotherFetchDoesNotFailARun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mustExec("true") // e.k knows the container
	other := e.newKennel()
	e.sleepUntil(other, testIdle, time.Minute)
	if ids := e.wsContainers(); len(ids) != 0 {
		t.Fatalf("containers after the other Fetch put the kennel to sleep: %v; want none", ids)
	}
	res, l := e.mustExec("echo", "still works")
	if res.ExitCode != 0 || !slices.Equal(l.out(), []string{"still works"}) {
		t.Fatalf("run after another Fetch's sleep: %+v, %q", res, l.out())
	}
}

// The Sleeper runs Sleep in the background until Close.
func TestSleeperPutsIdleKennelsToSleep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mustExec("true")
	s := kennel.NewSleeper(e.k, testIdle, e.ws, nil)
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	deadline := time.Now().Add(time.Minute)
	for len(e.wsContainers()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Sleeper did not put the idle kennel to sleep within a minute")
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(kennel.SleepInterval(testIdle)):
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
