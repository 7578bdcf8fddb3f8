package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/kennel"
)

// errAway is what the cutRunner's kennel says while it is out of reach.
var errAway = fmt.Errorf("engine does not answer: %w", kennel.ErrEngineUnavailable)

// cutRunner is a KennelRunner whose connection to the kennel can be cut:
// the first Run's stream is lost after its first text event (the run goes
// on in the kennel, read by nobody), and while away every look at the
// kennel fails as for an engine out of reach.
type cutRunner struct {
	*task.KennelRunner
	away atomic.Bool
	// lost is closed when the first stream was lost.
	lost     chan struct{}
	cut      sync.Once
	statuses atomic.Int64
	wg       sync.WaitGroup
}

func newCutRunner(t testing.TB, inner *task.KennelRunner) *cutRunner {
	r := &cutRunner{KennelRunner: inner, lost: make(chan struct{})}
	t.Cleanup(r.wg.Wait)
	return r
}

// Run loses the stream of the first run after its first text: the real
// stream is drained to the run's end by a goroutine of the test.
func (r *cutRunner) Run(ctx context.Context, h harness.Name, ht harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	first := false
	r.cut.Do(func() { first = true })
	if !first {
		return r.KennelRunner.Run(ctx, h, ht, onEvent)
	}
	cut := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	passing := true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.KennelRunner.Run(context.WithoutCancel(ctx), h, ht, func(ev harness.Event) {
			mu.Lock()
			defer mu.Unlock()
			if !passing {
				return
			}
			onEvent(ev)
			if ev.Kind == harness.KindText {
				passing = false
				once.Do(func() { close(cut) })
			}
		})
		once.Do(func() { close(cut) })
	}()
	<-cut
	r.away.Store(true)
	close(r.lost)
	return harness.Outcome{ExitCode: -1}, fmt.Errorf("harness: run: output: %w", kennel.ErrStreamLost)
}

func (r *cutRunner) Attach(ctx context.Context, h harness.Name, ht harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	if r.away.Load() {
		return harness.Outcome{ExitCode: -1}, errAway
	}
	return r.KennelRunner.Attach(ctx, h, ht, onEvent)
}

func (r *cutRunner) Status(ctx context.Context, ht harness.Task) (task.RunStatus, error) {
	r.statuses.Add(1)
	if r.away.Load() {
		return task.RunStatus{}, errAway
	}
	return r.KennelRunner.Status(ctx, ht)
}

func (r *cutRunner) Stop(ctx context.Context, ht harness.Task) error {
	if r.away.Load() {
		return errAway
	}
	return r.KennelRunner.Stop(ctx, ht)
}

// awaitStatuses waits until the kennel was asked n more times.
func (r *cutRunner) awaitStatuses(t testing.TB, n int64) {
	t.Helper()
	want := r.statuses.Load() + n
	deadline := time.Now().Add(time.Minute)
	for r.statuses.Load() < want {
		if time.Now().After(deadline) {
			t.Fatal("the kennel was not asked again")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func count(ups []task.Update, ok func(task.Update) bool) int {
	n := 0
	for _, u := range ups {
		if ok(u) {
			n++
		}
	}
	return n
}

// startOutage creates a task with goal in workspace app on a cutRunner
// and waits until the owner was told that its run's engine does not
// answer. It returns the kennel, the runner, the engine, the workspace's
// path and the task as created.
func startOutage(t *testing.T, goal string) (*kennel.Kennel, *cutRunner, *testEngine, string, task.Task) {
	t.Helper()
	k, inner := newKennel(t)
	runner := newCutRunner(t, inner)
	e := newEngine(t, runner, engineOptions{reconnect: 50 * time.Millisecond})
	e.ws.InKennel(k) // the engine finds no KennelRunner to take it from
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: goal})
	if err != nil {
		t.Fatal(err)
	}
	e.obs.waitFor(t, created.ID, func(u task.Update) bool { return u.Kind == task.Unreachable })
	return k, runner, e, wsPath, created
}

// A run whose stream is lost goes on: the owner is told once that its
// engine does not answer, the run is followed again when it does, and the
// task succeeds with its whole output, each event once.
func TestStreamLostThenFollowedAgain(t *testing.T) {
	k, runner, e, wsPath, created := startOutage(t, "take a while [scenario:slow:6] [file:notes.txt]")
	<-runner.lost
	runner.awaitStatuses(t, 3) // asked again, still away
	st, err := k.Task(t.Context(), wsPath, created.ID)
	if err != nil || !st.Running {
		t.Fatalf("the run does not go on in the kennel while its stream is lost: %+v, %v", st, err)
	}
	if got, _ := e.Get(t.Context(), created.ID); got.State != task.Running {
		t.Fatalf("while the engine is away the task is %s; want running", got.State)
	}
	runner.away.Store(false)
	got := wait(t, e, created.ID)
	if got.State != task.Succeeded || !strings.Contains(got.Summary, "Appended") {
		t.Fatalf("task = %+v", got)
	}
	ups := e.obs.of(created.ID)
	if n := count(ups, func(u task.Update) bool { return u.Kind == task.Unreachable }); n != 1 {
		t.Errorf("told %d times that the engine does not answer; want once", n)
	}
	if n := count(ups, func(u task.Update) bool { return u.Kind == task.Reattached && !u.Recovered }); n != 1 {
		t.Errorf("told %d times that the run is followed again; want once", n)
	}
	// Each "Still working" of the CLI's six seconds once: the replayed
	// start of the log is not told again.
	texts := map[string]int{}
	for _, u := range ups {
		if u.Kind == task.Progress && u.Event.Kind == harness.KindText {
			texts[u.Event.Text]++
		}
	}
	for text, n := range texts {
		if n != 1 {
			t.Errorf("event %q told %d times", text, n)
		}
	}
	if len(texts) < 2 {
		t.Errorf("texts told: %v; want the run's whole output", texts)
	}
	kinds := map[string]bool{}
	if err := e.Log(t.Context(), created.ID, func(le task.LogEntry) error { kinds[le.Kind] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if !kinds[task.KindUnreachable] || !kinds[task.KindReattached] {
		t.Errorf("the task's log lacks the outage: %v", kinds)
	}
}

// A cancel while the engine is out of reach is said to wait for it, and
// carried out when it answers: the run is stopped there and the task ends
// cancelled.
func TestCancelWhileUnreachable(t *testing.T) {
	k, runner, e, wsPath, created := startOutage(t, "take a while [scenario:slow:60]")
	done, err := e.RequestCancel(t.Context(), created.ID)
	if err != nil {
		t.Fatal(err)
	}
	u := e.obs.waitFor(t, created.ID, func(u task.Update) bool { return u.Kind == task.Unreachable && u.Task.CancelRequested })
	if u.Task.ID != created.ID {
		t.Fatal(u)
	}
	select {
	case <-done:
		t.Fatal("the task ended while its run could not be stopped")
	default:
	}
	runner.away.Store(false)
	<-done
	got := wait(t, e, created.ID)
	if got.State != task.Cancelled {
		t.Fatalf("task = %+v", got)
	}
	assertGone(t, k, wsPath, got.RunID)
}

// A run its kennel lost while the engine was out of reach (the container
// went away) ends failed, once, saying so; the worktree is kept.
func TestLostWhileUnreachable(t *testing.T) {
	k, runner, e, wsPath, created := startOutage(t, "take a while [scenario:slow:60]")
	if err := k.Remove(t.Context(), wsPath); err != nil && !errors.Is(err, kennel.ErrNoTask) {
		t.Fatal(err)
	}
	runner.away.Store(false)
	got := wait(t, e, created.ID)
	if got.State != task.Failed || !strings.Contains(got.Error, "interrupted") || !strings.Contains(got.Error, "went away") {
		t.Fatalf("task = %+v", got)
	}
	if got.Worktree == "" {
		t.Fatalf("the worktree was dropped: %+v", got)
	}
	ups := e.obs.of(created.ID)
	if n := count(ups, func(u task.Update) bool { return u.Kind == task.Ended }); n != 1 {
		t.Errorf("%d ends told; want one", n)
	}
}
