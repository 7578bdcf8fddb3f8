package harness

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownHarness: no adapter has that name.
	ErrUnknownHarness = errors.New("unknown harness")
	// ErrInvalidTask: the task cannot be run as given (bad id, empty goal,
	// relative path, …). The message lists every problem.
	ErrInvalidTask = errors.New("invalid task")
)

// GitError is a git command (run in the kennel around a run) that exited
// non-zero, for example because the work tree is not a git repository.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: exit code %d: %s", strings.Join(e.Args, " "), e.ExitCode, e.Stderr)
}
