package task

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: no task has that id.
	ErrNotFound = errors.New("no such task")
	// ErrInvalid: the request cannot be run as given; the message says why.
	ErrInvalid = errors.New("invalid task request")
	// ErrNoPlanMode: the task's harness cannot plan first (CreatePlan);
	// it also wraps ErrInvalid.
	ErrNoPlanMode = fmt.Errorf("no plan mode: %w", ErrInvalid)
	// ErrBusy is wrapped by *BusyError.
	ErrBusy = errors.New("workspace busy")
	// ErrState: the task is not in a state that allows the operation
	// (answering a task that asked nothing, cancelling a finished one).
	ErrState = errors.New("not possible in the task's state")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("task engine closed")
)

// BusyError refuses a task on a workspace another task holds.
type BusyError struct {
	Workspace string
	// TaskID is the task holding the workspace.
	TaskID string
	State  State
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("workspace %s is busy with task %s (%s); cancel it, wait for it, or queue the new task", e.Workspace, e.TaskID, e.State)
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// causes of a run's end that are not the harness's own.
var (
	errDetached  = errors.New("task engine closed")
	errCancelled = errors.New("cancelled by the owner")
)
