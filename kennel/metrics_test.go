package kennel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// measured records what a Pool measures.
type measured struct {
	mu      sync.Mutex
	starts  map[string]int // engine/kind
	stops   map[string]int // engine
	longest time.Duration
	hooked  int            // the caller's own Started hook
	refused map[string]int // engine/reason
}

func (m *measured) ExecStarted(engine, kind string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starts[engine+"/"+kind]++
	m.longest = max(m.longest, d)
}

func (m *measured) EgressRefused(engine, reason string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refused == nil {
		m.refused = map[string]int{}
	}
	m.refused[engine+"/"+reason] += n
}

func (m *measured) Stopped(engine string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stops[engine]++
	m.longest = max(m.longest, d)
}

// A measured Pool times each exec's start by engine and kind (a task or
// an untracked command) and each stop; the caller's own Started hook is
// still called.
func TestPoolMeasuresExecAndStop(t *testing.T) {
	e := newEnv(t)
	pool, err := kennel.NewPool("local", map[string]*kennel.Kennel{"local": e.k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &measured{starts: map[string]int{}, stops: map[string]int{}}
	pool.Measure(m)

	ctx := context.Background()
	res, err := pool.Exec(ctx, kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, Started: func() { m.mu.Lock(); m.hooked++; m.mu.Unlock() }}, func(kennel.Stream, []byte) {})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec true: %+v, %v", res, err)
	}
	task := newTaskID()
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, kennel.ExecSpec{Workspace: e.ws, Argv: []string{"sh", "-c", "echo ready; exec sleep 600"}, TaskID: task},
			func(_ kennel.Stream, line []byte) {
				if string(line) == "ready" {
					once.Do(func() { close(ready) })
				}
			})
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("task ended before it was ready: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("task never printed ready")
	}
	if err := pool.Stop(ctx, e.ws, task); err != nil {
		t.Fatalf("stop: %v", err)
	}
	<-done

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.starts["local/command"] != 1 || m.starts["local/task"] != 1 {
		t.Errorf("exec starts measured: %v, want one command and one task on local", m.starts)
	}
	if m.stops["local"] != 1 {
		t.Errorf("stops measured: %v, want one on local", m.stops)
	}
	if m.hooked != 1 {
		t.Errorf("the caller's Started hook was called %d times, want 1", m.hooked)
	}
	if m.longest <= 0 {
		t.Errorf("no time measured")
	}
}
