package agent

import (
	"errors"

	"github.com/fetch-dev/fetch/internal/llm"
)

var (
	// ErrTurnTime is the cause of a turn that ran out of wall time.
	ErrTurnTime = errors.New("the turn ran out of time")
	// errNoWorkspaces: no workspace registry is wired.
	errNoWorkspaces = errors.New("workspaces are not available in this Fetch")
	// errNoTasks: no task engine is wired.
	errNoTasks = errors.New("the task engine is not available in this Fetch")
)

// userMessage is what the owner reads when a completion failed: the
// provider's fault as llm classified it, or else one of Fetch's own.
func userMessage(err error) string {
	if m := llm.UserMessage(err); m != "" {
		return m
	}
	return "Something went wrong on my side; the details are in Fetch's log. Try again, or /status to see where things stand."
}
