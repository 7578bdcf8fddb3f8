package task

import (
	"bytes"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/store"
)

// TestInvalidUsageIsRefused: a usage report with a negative, NaN or
// infinite cost or negative tokens neither lowers the run's budget use
// nor the task's cost: it is logged and taken as not reported.
func TestInvalidUsageIsRefused(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, bad := range []harness.Usage{
		{CostUSD: -10},
		{CostUSD: math.NaN()},
		{CostUSD: math.Inf(1)},
		{InputTokens: -1_000_000, CostUSD: 0.01},
	} {
		var logs bytes.Buffer
		e := New(Config{Store: db, Logger: slog.New(slog.NewTextHandler(&logs, nil)), TaskBudgetUSD: 0.5})
		var stopped []float64
		w := &eventWriter{e: e, ctx: t.Context(), task: Task{ID: "t-1", Harness: "opencode"}, scope: harness.UsagePerRun, budget: 0.5,
			onBudget: func(spent float64) { stopped = append(stopped, spent) }}
		batch := []harness.Event{
			{Kind: harness.KindUsage, Usage: &harness.Usage{CostUSD: 0.3}},
			{Kind: harness.KindUsage, Usage: &bad},
			{Kind: harness.KindSpend, Usage: &bad},
			{Kind: harness.KindUsage, Usage: &harness.Usage{CostUSD: 0.3}},
		}
		for i := range batch {
			w.refuseInvalidUsage(&batch[i])
			w.checkBudget(batch[i])
		}
		if len(stopped) != 1 || math.Abs(stopped[0]-0.6) > 1e-9 {
			t.Errorf("%+v: budget stops %v; want one at $0.60 (the bad report left out)", bad, stopped)
		}
		if batch[1].Usage != nil || batch[2].Usage != nil || batch[0].Usage == nil {
			t.Errorf("%+v: the bad reports were kept: %+v", bad, batch)
		}
		if !strings.Contains(logs.String(), "usage report refused") {
			t.Errorf("%+v: not logged: %s", bad, logs.String())
		}

		task := Task{ID: "t-1", CLICostUSD: 0.2}
		e.setCost(t.Context(), &task, harness.Outcome{Usage: bad})
		if task.CLICostUSD != 0.2 || task.CostUSD != 0.2 {
			t.Errorf("%+v: task cost %v (CLI %v) after the run; want 0.2 still", bad, task.CostUSD, task.CLICostUSD)
		}
	}
}

// TestBudgetCheckedAsEventsArrive: the budget is checked on each usage
// event as the runner hands it over, not when the log writer reaches it:
// with the writer stalled (a busy database), the run is still stopped at
// the first message over the cap, and only once.
func TestBudgetCheckedAsEventsArrive(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := New(Config{Store: db, Logger: slog.New(slog.DiscardHandler), TaskBudgetUSD: 0.05})
	var stopped []float64
	// No writer goroutine: nothing reads the queue.
	w := &eventWriter{e: e, ctx: t.Context(), task: Task{ID: "t-1", Harness: "claude"}, scope: harness.UsagePerRun, budget: 0.05,
		ch: make(chan harness.Event, 8), onBudget: func(spent float64) { stopped = append(stopped, spent) }}
	for i, spent := range []float64{0.0225, 0.045, 0.0675, 0.09} {
		w.add(harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{CostUSD: spent}})
		w.add(harness.Event{Kind: harness.KindText, Text: "working"})
		want := 0
		if i >= 2 {
			want = 1
		}
		if len(stopped) != want {
			t.Fatalf("after the message that brought the run to $%.4f: %d budget stops, want %d", spent, len(stopped), want)
		}
	}
	if math.Abs(stopped[0]-0.0675) > 1e-9 {
		t.Errorf("stopped at $%.4f; want $0.0675, the first message over the $0.05 cap", stopped[0])
	}
	// A raised cap (the task's own) is the one checked.
	w2 := &eventWriter{e: e, ctx: t.Context(), task: Task{ID: "t-2", Harness: "claude", BudgetUSD: 0.1}, scope: harness.UsagePerRun, budget: e.budgetOf(Task{BudgetUSD: 0.1}),
		ch: make(chan harness.Event, 8), onBudget: func(spent float64) { stopped = append(stopped, spent) }}
	w2.add(harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{CostUSD: 0.09}})
	if len(stopped) != 1 {
		t.Errorf("a run under its raised $0.10 cap was stopped at $0.09")
	}
}

// TestLimitsKeptAndNear: the windows a run's CLI reports are kept per CLI
// (the latest of each), and a task about to start on that CLI is told
// when one is used to 90% or more and has not reset yet; another CLI's
// task is not.
func TestLimitsKeptAndNear(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	e := New(Config{Store: db, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }})
	w := &eventWriter{e: e, ctx: t.Context(), task: Task{ID: "t-1", Harness: "claude"}}
	w.keepLimits([]harness.Event{
		{Kind: harness.KindLimits, Limits: []harness.Window{{Name: "five_hour", UsedPercent: 60, ResetsAt: now.Add(time.Hour)}}},
		{Kind: harness.KindText, Text: "working"},
		{Kind: harness.KindLimits, Limits: []harness.Window{{Name: "five_hour", UsedPercent: 94, Status: "allowed_warning", ResetsAt: now.Add(time.Hour)}, {Name: "seven_day", UsedPercent: 20}}},
	})
	note := e.nearLimit(t.Context(), Task{ID: "t-2", Harness: "claude"})
	if !strings.Contains(note, "five_hour 94% used, resets Nov 28 13:00 UTC") || strings.Contains(note, "seven_day") {
		t.Errorf("near-limit note %q; want the five_hour window at 94%% only", note)
	}
	if note := e.nearLimit(t.Context(), Task{ID: "t-3", Harness: "codex"}); note != "" {
		t.Errorf("a codex task is told of claude's limits: %q", note)
	}
	now = now.Add(2 * time.Hour) // the window reset
	if note := e.nearLimit(t.Context(), Task{ID: "t-4", Harness: "claude"}); note != "" {
		t.Errorf("a window that reset still counts: %q", note)
	}
}
