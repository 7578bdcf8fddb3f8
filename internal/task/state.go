package task

// State is where a task is in its life. The values are stored and shown.
type State string

const (
	// Queued waits for its workspace or for a free slot.
	Queued State = "queued"
	// Running: a harness works on it.
	Running State = "running"
	// WaitingInput: the harness asked the owner something; the answer
	// resumes it.
	WaitingInput State = "waiting_input"
	// Succeeded: the harness finished and reported success.
	Succeeded State = "succeeded"
	// Failed: the harness failed, timed out, or was interrupted.
	Failed State = "failed"
	// Cancelled: stopped by the owner; partial results are kept.
	Cancelled State = "cancelled"
	// NeedsAttention: the run ended but its result is unclear (no final
	// result, the branch could not be recorded); the owner should look.
	NeedsAttention State = "needs_attention"
)

// Terminal reports whether nothing more happens to a task in state s.
func (s State) Terminal() bool {
	switch s {
	case Succeeded, Failed, Cancelled, NeedsAttention:
		return true
	case Queued, Running, WaitingInput:
		return false
	}
	return false
}

// Active reports whether the task holds its workspace.
func (s State) Active() bool { return s == Running || s == WaitingInput }

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	switch s {
	case Queued, Running, WaitingInput, Succeeded, Failed, Cancelled, NeedsAttention:
		return true
	}
	return false
}

// next lists the states each state may move to.
var next = map[State][]State{
	Queued:       {Running, Cancelled, Failed},
	Running:      {WaitingInput, Succeeded, Failed, Cancelled, NeedsAttention},
	WaitingInput: {Running, Cancelled, Failed},
	// A task whose branch conflicts with the latest base runs again to
	// resolve it (Engine.Resolve); one that ships after all succeeds. A
	// shipped task runs again to address its pull request's review.
	NeedsAttention: {Running, Succeeded},
	Succeeded:      {Running},
	// Any ended task runs again when the owner continues it (a follow-up
	// on its branch, Engine.Continue) or retries it.
	Failed:    {Running},
	Cancelled: {Running},
}

// canMove reports whether from → to is a legal transition.
func canMove(from, to State) bool {
	for _, s := range next[from] {
		if s == to {
			return true
		}
	}
	return false
}

// ExitCode is the exit code of `fetch task run --wait` for a task that
// reached s: 0 succeeded, 1 failed, 2 needs attention or waiting for input,
// 3 cancelled.
func (s State) ExitCode() int {
	switch s {
	case Succeeded:
		return 0
	case Failed:
		return 1
	case NeedsAttention, WaitingInput:
		return 2
	case Cancelled:
		return 3
	case Queued, Running:
		return 1
	}
	return 1
}
