package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// Runner executes commands in the kennel. *kennel.Kennel implements it.
type Runner interface {
	Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error)
}

// Run runs task with adapter's CLI through runner and returns how it ended.
//
// Before the run it snapshots the work tree with git; it then starts the CLI
// under the task's id (so that kennel.Stop reaches it) with the adapter's
// argv and environment only, feeds stdout to the adapter's parser and calls
// onEvent (which may be nil) for every event, in order, from the runner's
// line callback. After the CLI ended, however it ended, it snapshots the work
// tree again and emits one file_changed event per file that changed. A
// read-only task (Task.ReadOnly) gets no snapshots, since taking one writes
// git objects: the caller checks that the work tree stayed the same; nor
// does a task whose caller measures the work itself (Task.Measured).
//
// A run that the CLI failed, that timed out or that was stopped is an
// Outcome, not an error. Errors are infrastructure failures: an invalid
// task, git failing, the runner failing, or ctx ending (then the Outcome is
// filled as far as it is known, with Stopped set).
func Run(ctx context.Context, runner Runner, adapter Adapter, task Task, creds Credentials, onEvent func(Event)) (Outcome, error) {
	creds, _ = egressRun(adapter, task, creds)
	inv, err := adapter.Invocation(task, creds)
	if err != nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s: %w", adapter.Name(), err)
	}
	return execute(ctx, runner, adapter, task, inv, nil, nil, nil, onEvent)
}

// execute runs inv for task: the snapshots, the exec and the parsing of
// Run. prepare, when set, completes the exec's spec before the run (and may
// fail it); ended, when set, is called as soon as the exec returned;
// onLine, when set, sees each stdout line before the parser does.
func execute(ctx context.Context, runner Runner, adapter Adapter, task Task, inv Invocation, prepare func(*kennel.ExecSpec) error, ended func(), onLine func([]byte), onEvent func(Event)) (Outcome, error) {
	name := adapter.Name()
	var err error
	repo := gitRepo{runner: runner, workspace: task.Workspace, dir: task.dir(), taskID: task.ID}
	var before snapshot
	measure := !task.ReadOnly && !task.Measured
	if measure {
		before, err = repo.snapshot(ctx)
		if err != nil {
			return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s: snapshot before: %w", name, err)
		}
	}

	s := newStream(adapter.NewParser(task), onEvent)
	spec := kennel.ExecSpec{
		Workspace: task.Workspace,
		Dir:       task.dir(),
		Argv:      inv.Argv,
		Env:       inv.Env,
		TaskID:    task.ID,
		Timeout:   task.Timeout,
		Prepare:   task.Prepare,
		Record:    task.Record,
	}
	_, spec.Egress = egressRun(adapter, task, nil)
	if prepare != nil {
		if err := prepare(&spec); err != nil {
			return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s: %w", name, err)
		}
	}
	execCtx, hs := watchHandshake(ctx, adapter, &spec)
	defer hs.stop()
	res, execErr := runner.Exec(execCtx, spec, func(stream kennel.Stream, line []byte) {
		if stream == kennel.Stdout {
			hs.line(line)
			if onLine != nil {
				onLine(line)
			}
		}
		s.output(stream, line)
	})
	if ended != nil {
		ended()
	}
	s.flush()
	timedOut := res.TimedOut || errors.Is(execErr, kennel.ErrTimeout)
	unanswered := hs.failed() && ctx.Err() == nil
	if execErr != nil && !timedOut && !unanswered && ctx.Err() == nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s: exec: %w", name, execErr)
	}
	e := end{
		exitCode:   res.ExitCode,
		stderrTail: string(res.StderrTail),
		timedOut:   timedOut,
		timeout:    task.Timeout,
		stopped:    res.Stopped || ctx.Err() != nil,
		program:    inv.Argv[0],
	}
	e.notInKennel(adapter)
	if unanswered {
		// Fetch stopped the run because the CLI never answered its
		// handshake: that is the failure, not a stop.
		e.stopped, e.failure = false, hs.message
	}
	o := s.tally.outcome(e)
	o.Prepared, o.Recorded = s.prepared, s.recorded

	if !measure {
		if ctx.Err() != nil {
			return o, fmt.Errorf("harness: run %s: %w", name, context.Cause(ctx))
		}
		return o, nil
	}
	// The work tree is measured even when the run was stopped or ctx ended:
	// the CLI may have changed files before that.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitTimeout)
	defer cancel()
	files, err := repo.changes(gctx, before)
	if err != nil {
		return o, fmt.Errorf("harness: run %s: changes: %w", name, err)
	}
	o.Files = files
	for _, f := range files {
		s.emit(Event{Kind: KindFileChanged, Path: f.Path, Change: f.Change, Added: f.Added, Removed: f.Removed, Git: true})
	}
	if ctx.Err() != nil {
		return o, fmt.Errorf("harness: run %s: %w", name, context.Cause(ctx))
	}
	return o, nil
}

// handshaker is an adapter whose CLI must answer Fetch's opening within a
// bound (a generic ACP agent, whose command may be anything): bound is how
// long it has from the start of the run, answered tells the line that
// answers, message is the run's failure when none came.
type handshaker interface {
	handshakeBound() (bound time.Duration, answered func(line []byte) bool, message string)
}

// missingCLI is an adapter that says itself what a run whose program is
// not in the kennel failed with: the program and the message.
type missingCLI interface {
	notInKennel() (program, message string)
}

// notInKennel takes the adapter's own words for a program the kennel does
// not have, when it has some.
func (e *end) notInKennel(adapter Adapter) {
	if m, ok := adapter.(missingCLI); ok {
		e.program, e.missing = m.notInKennel()
	}
}

// handshakeWatch stops a run whose CLI did not answer its handshake in
// time: its timer cancels the exec's context. The timer is its only
// goroutine; stop ends it.
type handshakeWatch struct {
	answered func([]byte) bool
	message  string

	mu       sync.Mutex
	timer    *time.Timer
	done     bool // answered, or the run is over
	expired  bool
	cancel   context.CancelCauseFunc
	disabled bool
}

// errHandshake is the cause of a run stopped by its handshake's bound.
var errHandshake = errors.New("the CLI did not answer its handshake in time")

// watchHandshake returns the context of the exec and its watch: for an
// adapter that is not a handshaker, ctx and a watch that does nothing.
// The bound runs from the start of the process (spec.Started), or from now
// when nobody is told of it.
func watchHandshake(ctx context.Context, adapter Adapter, spec *kennel.ExecSpec) (context.Context, *handshakeWatch) {
	h, ok := adapter.(handshaker)
	if !ok {
		return ctx, &handshakeWatch{disabled: true}
	}
	bound, answered, message := h.handshakeBound()
	if bound <= 0 {
		return ctx, &handshakeWatch{disabled: true}
	}
	execCtx, cancel := context.WithCancelCause(ctx)
	w := &handshakeWatch{answered: answered, message: message, cancel: cancel}
	arm := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.done || w.timer != nil {
			return
		}
		w.timer = time.AfterFunc(bound, w.expire)
	}
	if started := spec.Started; started != nil {
		spec.Started = func() {
			arm()
			started()
		}
	} else {
		arm()
	}
	return execCtx, w
}

func (w *handshakeWatch) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done, w.expired = true, true
	w.cancel(errHandshake)
}

// line sees each stdout line until the handshake is answered.
func (w *handshakeWatch) line(l []byte) {
	if w.disabled {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || !w.answered(l) {
		return
	}
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// failed tells whether the watch stopped the run.
func (w *handshakeWatch) failed() bool {
	if w.disabled {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expired
}

// stop ends the watch and releases its context.
func (w *handshakeWatch) stop() {
	if w.disabled {
		return
	}
	w.mu.Lock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.cancel(nil)
}
