package task

import (
	"sync"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// forgets are the kennel logs of ended runs still to drop, by workspace.
// A run's log is needed until its end is recorded (a restarted Fetch reads
// it); afterwards the next batch of git in the same workspace (a worktree
// made, work recorded) drops it, so that ending a task costs no exec of
// its own. Close drops what is left.
type forgets struct {
	mu   sync.Mutex
	runs map[string][]string // workspace name → run ids
}

func (f *forgets) add(ws, runID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string][]string{}
	}
	f.runs[ws] = append(f.runs[ws], runID)
}

// take returns the steps that forget ws's runs, and clears them.
func (f *forgets) take(ws string) []gitrun.Step {
	f.mu.Lock()
	ids := f.runs[ws]
	delete(f.runs, ws)
	f.mu.Unlock()
	steps := make([]gitrun.Step, len(ids))
	for i, id := range ids {
		steps[i] = gitrun.Step{Argv: shim.ForgetArgv(id)}
	}
	return steps
}

// all returns every pending run, and clears them.
func (f *forgets) all() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.runs
	f.runs = nil
	return out
}
