package harness

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownHarness: no adapter has that name.
	ErrUnknownHarness = errors.New("unknown harness")
	// ErrInvalidTask: the task cannot be run as given (bad id, empty goal,
	// relative path, …). The message lists every problem.
	ErrInvalidTask = errors.New("invalid task")
	// ErrNoReadOnly: the task is read-only and the CLI has no read-only
	// mode Fetch trusts (Traits.ReadOnly is false).
	ErrNoReadOnly = errors.New("the CLI has no read-only mode")
)
