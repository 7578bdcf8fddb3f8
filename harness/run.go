package harness

import (
	"context"
	"errors"
	"fmt"

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
	res, execErr := runner.Exec(ctx, spec, func(stream kennel.Stream, line []byte) {
		if stream == kennel.Stdout && onLine != nil {
			onLine(line)
		}
		s.output(stream, line)
	})
	if ended != nil {
		ended()
	}
	s.flush()
	timedOut := res.TimedOut || errors.Is(execErr, kennel.ErrTimeout)
	if execErr != nil && !timedOut && ctx.Err() == nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s: exec: %w", name, execErr)
	}
	o := s.tally.outcome(end{
		exitCode:   res.ExitCode,
		stderrTail: string(res.StderrTail),
		timedOut:   timedOut,
		timeout:    task.Timeout,
		stopped:    res.Stopped || ctx.Err() != nil,
		program:    inv.Argv[0],
	})
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
