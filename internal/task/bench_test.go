package task_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
	"golang.org/x/sync/errgroup"
)

// BenchmarkSixteenTasks runs 16 tasks at once in 16 workspaces, each a
// scripted CLI in the real kennel, and checks that no event was lost: every
// event the CLI produced is in the task's log, in order, and reached the
// observer. Containers are made before the timer starts.
func BenchmarkSixteenTasks(b *testing.B) {
	const n = 16
	k, runner := newKennel(b)
	e := newEngine(b, runner, engineOptions{maxParallel: n, timeout: 5 * time.Minute})
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("ws%02d", i)
		e.workspace(b, k, names[i])
	}
	runAll := func() []string {
		ids := make([]string, n)
		var g errgroup.Group
		for i, ws := range names {
			g.Go(func() error {
				t, err := e.Create(context.Background(), task.Request{Workspace: ws, Goal: "work a little [scenario:huge:1]"})
				if err != nil {
					return err
				}
				ids[i] = t.ID
				got, err := e.Wait(context.Background(), t.ID)
				if err != nil {
					return err
				}
				if got.State != task.Succeeded {
					return fmt.Errorf("task %s: %s: %s", got.ID, got.State, got.Error)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		return ids
	}
	runAll() // warm-up: containers up
	b.ResetTimer()
	var events int
	for b.Loop() {
		for _, id := range runAll() {
			events += checkNoLostEvents(b, e, id)
		}
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// checkNoLostEvents compares a task's stored harness events with what the
// observer saw, and returns their number.
func checkNoLostEvents(b *testing.B, e *testEngine, id string) int {
	b.Helper()
	var stored []string
	results := 0
	err := e.Log(context.Background(), id, func(le task.LogEntry) error {
		if le.Kind != "state" {
			stored = append(stored, le.Kind)
		}
		if le.Kind == string(harness.KindResult) {
			results++
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var seen []string
	for _, u := range e.obs.of(id) {
		if u.Kind == task.Progress {
			seen = append(seen, string(u.Event.Kind))
		}
	}
	if results != 1 || len(stored) < 100 || fmt.Sprint(stored) != fmt.Sprint(seen) {
		b.Fatalf("task %s: %d stored events (%d results), %d seen", id, len(stored), results, len(seen))
	}
	return len(stored)
}
