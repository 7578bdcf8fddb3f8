package policy

import (
	"fmt"
	"strings"
	"sync"
)

// DefaultLoopLimit is how many times a task may ask for the same denied
// thing before the loop guard stops it.
const DefaultLoopLimit = 3

// LoopGuard counts identical denied requests per task. A CLI that keeps
// asking for what was denied (by the policy or by the owner) is stopped
// after Limit of them. It is safe for concurrent use; its lock is never
// held across a call out of this package.
type LoopGuard struct {
	limit int
	mu    sync.Mutex
	// denied counts, per task, each request's key.
	denied map[string]map[string]int
}

// NewLoopGuard makes a guard that stops a task at its limit'th identical
// denial (DefaultLoopLimit when limit < 1).
func NewLoopGuard(limit int) *LoopGuard {
	if limit < 1 {
		limit = DefaultLoopLimit
	}
	return &LoopGuard{limit: limit, denied: make(map[string]map[string]int)}
}

// Stop is the guard's verdict on a denial.
type Stop struct {
	// Stop: the task must be stopped.
	Stop bool
	// Count is how many times the task was denied this request.
	Count int
	// Message tells the owner why the task was stopped ("" when it was not).
	Message string
}

// Denied records that taskID was denied req and says whether to stop it.
func (g *LoopGuard) Denied(taskID string, req Request) Stop {
	k := key(req)
	g.mu.Lock()
	m := g.denied[taskID]
	if m == nil {
		m = make(map[string]int)
		g.denied[taskID] = m
	}
	m[k]++
	n := m[k]
	g.mu.Unlock()
	if n < g.limit {
		return Stop{Count: n}
	}
	return Stop{Stop: true, Count: n, Message: fmt.Sprintf(
		"Stopped task %s: the coding CLI asked %d times for %s after it was denied. Tell it what to do instead, or change the policy (/policy).",
		taskID, n, Describe(req))}
}

// Forget drops what the guard counted for a task that ended.
func (g *LoopGuard) Forget(taskID string) {
	g.mu.Lock()
	delete(g.denied, taskID)
	g.mu.Unlock()
}

// key is what makes two requests the same: the kind, the tool and what
// it acts on, with blanks normalized.
func key(r Request) string {
	return strings.Join([]string{string(r.Kind), r.Tool, oneLine(r.Command), r.Dir, strings.Join(r.Paths, "\x00"), r.URL}, "\x1f")
}
