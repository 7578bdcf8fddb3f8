package harness

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownHarness: no adapter has that name.
	ErrUnknownHarness = errors.New("unknown harness")
	// ErrInvalidTask: the task cannot be run as given (bad id, empty goal,
	// relative path, …). The message lists every problem.
	ErrInvalidTask = errors.New("invalid task")
)
