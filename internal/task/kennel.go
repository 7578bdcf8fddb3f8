package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/kennel"
)

// Kennel is what KennelRunner needs of the sandbox; *kennel.Kennel
// implements it.
type Kennel interface {
	harness.Runner
	harness.Follower
	Stop(ctx context.Context, workspace, taskID string) error
	Task(ctx context.Context, workspace, taskID string) (kennel.TaskState, error)
	Forget(ctx context.Context, workspace, taskID string) error
}

// KennelRunner is the Runner Fetch uses: harness.Run and harness.Follow
// over the kennel.
type KennelRunner struct {
	Kennel    Kennel
	Harnesses *harness.Registry
	// Credentials are handed to the adapters, which pick their own.
	Credentials harness.Credentials
}

// Run implements Runner.
func (r *KennelRunner) Run(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	a, err := r.Harnesses.Get(h)
	if err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	return harness.Run(ctx, r.Kennel, a, t, r.Credentials, onEvent)
}

// Attach implements Runner. A run whose log the kennel does not have (its
// container is gone) or whose wrapper was killed before recording how it
// ended is ErrGone.
func (r *KennelRunner) Attach(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	a, err := r.Harnesses.Get(h)
	if err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	out, err := harness.Follow(ctx, r.Kennel, a, t, onEvent)
	if errors.Is(err, kennel.ErrNoTask) || errors.Is(err, kennel.ErrTaskLost) {
		return out, fmt.Errorf("%w: %w", ErrGone, err)
	}
	return out, err
}

// Stop implements Runner.
func (r *KennelRunner) Stop(ctx context.Context, t harness.Task) error {
	return r.Kennel.Stop(ctx, t.Workspace, t.ID)
}

// Status implements Runner.
func (r *KennelRunner) Status(ctx context.Context, t harness.Task) (RunStatus, error) {
	ts, err := r.Kennel.Task(ctx, t.Workspace, t.ID)
	if errors.Is(err, kennel.ErrNoTask) {
		return RunStatus{}, nil
	}
	if err != nil {
		return RunStatus{}, err
	}
	return RunStatus{Known: true, Running: ts.Running}, nil
}

// Forget implements Runner.
func (r *KennelRunner) Forget(ctx context.Context, t harness.Task) error {
	return r.Kennel.Forget(ctx, t.Workspace, t.ID)
}
