package kennel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// TaskState is what the kennel knows about a task in its container.
type TaskState struct {
	ID string
	// Running: the task's wrapper is alive (the task has not ended).
	Running bool
	// Ephemeral: an untracked run (Exec without TaskID); it has no log.
	Ephemeral bool
	// PGID is the task's process group inside the container.
	PGID int
	// Pids are the task's live processes inside the container.
	Pids    []int
	Started time.Time
	// Exit is set once the task has ended.
	Exit *TaskExit
	// HasLog: the output can be read back with Follow.
	HasLog bool
}

// TaskExit is how a task ended.
type TaskExit struct {
	Code    int
	Stopped bool
	// Lost: the wrapper was killed before recording the exit; Code is -1.
	Lost bool
	// Error says why the program could not be started.
	Error string
	Ended time.Time
}

func taskState(ti shim.TaskInfo) TaskState {
	ts := TaskState{
		ID: ti.ID, Running: ti.Running, Ephemeral: ti.Ephemeral, PGID: ti.PGID,
		Pids: ti.Pids, Started: ti.Started, HasLog: ti.HasLog,
	}
	if ti.Exit != nil {
		ts.Exit = &TaskExit{Code: ti.Exit.Code, Stopped: ti.Exit.Stopped, Lost: ti.Exit.Lost, Error: ti.Exit.Error, Ended: ti.Exit.Ended}
	}
	return ts
}

// Task returns the state of a task, ErrNoTask when the kennel has no trace of
// it (or the workspace has no running container).
func (k *Kennel) Task(ctx context.Context, workspace, taskID string) (TaskState, error) {
	if err := checkWorkspace(workspace); err != nil {
		return TaskState{}, fmt.Errorf("kennel: task: %w", err)
	}
	if err := checkTaskID(taskID); err != nil {
		return TaskState{}, fmt.Errorf("kennel: task: %w", err)
	}
	ctr, err := k.lookup(ctx, workspace)
	if err != nil {
		return TaskState{}, fmt.Errorf("kennel: task %s: %w", taskID, err)
	}
	if ctr == "" {
		return TaskState{}, fmt.Errorf("kennel: task %s: %w", taskID, ErrNoTask)
	}
	ts, err := k.status(ctx, ctr, taskID)
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		err = ErrNoTask
	}
	if err != nil {
		return TaskState{}, fmt.Errorf("kennel: task %s: %w", taskID, err)
	}
	return ts, nil
}

func (k *Kennel) status(ctx context.Context, ctr, taskID string) (TaskState, error) {
	res, err := k.control(ctx, ctr, shim.StatusArgv(taskID), shim.ExitOK)
	if err != nil {
		return TaskState{}, err
	}
	var ti shim.TaskInfo
	if err := json.Unmarshal(res.stdout, &ti); err != nil {
		return TaskState{}, fmt.Errorf("status: %w: %w", ErrShim, err)
	}
	if !ti.Known {
		return TaskState{}, ErrNoTask
	}
	return taskState(ti), nil
}

// Follow streams a task's output from its log, from the beginning, to fn and,
// if the task is still running, keeps streaming until it ends; then it returns
// the task's Result. It serves a Fetch that restarted while a task ran, and
// reads back a finished task (until Forget). Cancelling ctx ends the
// following, not the task. A task whose wrapper was killed before recording
// its exit returns ErrTaskLost; one without a log (never run with a TaskID
// here, or forgotten) ErrNoTask.
func (k *Kennel) Follow(ctx context.Context, workspace, taskID string, fn LineHandler) (Result, error) {
	op := "kennel: follow " + taskID
	if err := checkWorkspace(workspace); err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := checkTaskID(taskID); err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	ctr, err := k.lookup(ctx, workspace)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	if ctr == "" {
		return Result{}, fmt.Errorf("%s: %w", op, ErrNoTask)
	}
	ts, err := k.status(ctx, ctr, taskID)
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		err = ErrNoTask
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	if !ts.HasLog {
		return Result{}, fmt.Errorf("%s: no log: %w", op, ErrNoTask)
	}
	// The reader runs under the shim too, so that cancelling it kills it.
	follower := ephemeralID()
	res, err := k.run(ctx, runSpec{
		workspace: workspace,
		task:      follower,
		ephemeral: true,
		argv:      shim.RunArgv(follower, k.runOptions(true, false, false), shim.LogArgv(taskID, true)),
		dir:       "/",
		prepared:  true, // the run may have had a Prepare
		recorded:  true, // and a Record
	}, fn)
	if err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	if res.ExitCode != shim.ExitOK {
		return res, fmt.Errorf("%s: log reader exit %d: %s: %w", op, res.ExitCode, trimMessage(res.StderrTail), ErrShim)
	}
	ts, err = k.status(ctx, ctr, taskID)
	if err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	res.Stopped, res.ExitCode = false, -1
	if ts.Exit == nil {
		// The log ended but no exit is recorded: the wrapper was just
		// killed and no stop has recorded it yet.
		return res, fmt.Errorf("%s: %w", op, ErrTaskLost)
	}
	res.ExitCode, res.Stopped = ts.Exit.Code, ts.Exit.Stopped
	if ts.Exit.Lost {
		return res, fmt.Errorf("%s: %w", op, ErrTaskLost)
	}
	return res, nil
}

// Forget removes a finished task's files (its log among them). Forgetting an
// unknown task is fine; a running one is ErrTaskRunning.
func (k *Kennel) Forget(ctx context.Context, workspace, taskID string) error {
	if err := checkWorkspace(workspace); err != nil {
		return fmt.Errorf("kennel: forget: %w", err)
	}
	if err := checkTaskID(taskID); err != nil {
		return fmt.Errorf("kennel: forget: %w", err)
	}
	ctr, err := k.lookup(ctx, workspace)
	if err != nil {
		return fmt.Errorf("kennel: forget %s: %w", taskID, err)
	}
	if ctr == "" {
		return nil
	}
	res, err := k.control(ctx, ctr, shim.ForgetArgv(taskID), shim.ExitOK, shim.ExitBusy)
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		return nil // its files went with it
	}
	if err != nil {
		return fmt.Errorf("kennel: forget %s: %w", taskID, err)
	}
	if res.code == shim.ExitBusy {
		return fmt.Errorf("kennel: forget %s: %w", taskID, ErrTaskRunning)
	}
	return nil
}
