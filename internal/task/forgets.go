package task

import (
	"sync"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// forgets are the kennel logs of ended runs still to drop, by workspace.
// A run's log is needed until its end is recorded (a restarted Fetch reads
// it); afterwards the next record of work in the same workspace (in a
// run's own exec, or a batch of its own) drops it, so that ending a task
// costs no exec of its own. Close drops what is left.
type forgets struct {
	mu   sync.Mutex
	runs map[string][]string // workspace name → run ids
}

func (f *forgets) add(ws string, runIDs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string][]string{}
	}
	f.runs[ws] = append(f.runs[ws], runIDs...)
}

// take returns ws's runs, and clears them (add puts back those a record
// did not drop after all).
func (f *forgets) take(ws string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.runs[ws]
	delete(f.runs, ws)
	return ids
}

// forgetSteps are the steps that forget runs.
func forgetSteps(ids []string) []gitrun.Step {
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
