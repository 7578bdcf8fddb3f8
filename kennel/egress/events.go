package egress

import (
	"sync"
	"time"
)

// Bounds of what the proxy remembers: it lives in memory until Fetch
// reads it.
const (
	maxRefusalsPerTask = 64
	maxTasks           = 1024
)

// Refusal is one connection the proxy refused. It never holds a
// credential; Host is what the run asked for.
type Refusal struct {
	Time      time.Time `json:"time"`
	Task      string    `json:"task,omitempty"`
	CLI       string    `json:"cli,omitempty"`
	Workspace string    `json:"workspace,omitempty"`
	Host      string    `json:"host"`
	Port      string    `json:"port"`
	Reason    string    `json:"reason"`
	Detail    string    `json:"detail,omitempty"`
}

// Report is what the proxy saw of one task's runs since it was last
// forgotten.
type Report struct {
	Refusals []Refusal `json:"refusals,omitempty"`
	// Dropped counts refusals beyond the ones kept.
	Dropped int `json:"dropped,omitempty"`
	// Passed counts connections through the forward proxy; APICalls
	// requests on the API routes.
	Passed   int `json:"passed,omitempty"`
	APICalls int `json:"api_calls,omitempty"`
}

// Total is the number of refusals, kept and dropped.
func (r Report) Total() int { return len(r.Refusals) + r.Dropped }

type eventLog struct {
	now   func() time.Time
	mu    sync.Mutex
	tasks map[string]*Report
	order []string // tasks in the order first seen, to bound the map
}

func newEventLog(now func() time.Time) *eventLog {
	return &eventLog{now: now, tasks: make(map[string]*Report)}
}

func (l *eventLog) report(task string) *Report {
	r, ok := l.tasks[task]
	if !ok {
		if len(l.order) >= maxTasks {
			delete(l.tasks, l.order[0])
			l.order = l.order[1:]
		}
		r = &Report{}
		l.tasks[task] = r
		l.order = append(l.order, task)
	}
	return r
}

func (l *eventLog) refuse(f Refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.report(f.Task)
	if len(r.Refusals) < maxRefusalsPerTask {
		r.Refusals = append(r.Refusals, f)
	} else {
		r.Dropped++
	}
}

func (l *eventLog) pass(task string) {
	l.mu.Lock()
	l.report(task).Passed++
	l.mu.Unlock()
}

func (l *eventLog) api(task string) {
	l.mu.Lock()
	l.report(task).APICalls++
	l.mu.Unlock()
}

// take returns task's report, and forgets it when forget is set.
func (l *eventLog) take(task string, forget bool) Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.tasks[task]
	if !ok {
		return Report{}
	}
	out := *r
	out.Refusals = append([]Refusal(nil), r.Refusals...)
	if forget {
		delete(l.tasks, task)
		for i, t := range l.order {
			if t == task {
				l.order = append(l.order[:i], l.order[i+1:]...)
				break
			}
		}
	}
	return out
}
