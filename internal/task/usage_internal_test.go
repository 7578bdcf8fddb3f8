package task

import (
	"bytes"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"

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
		w := &eventWriter{e: e, ctx: t.Context(), task: Task{ID: "t-1", Harness: "opencode"}, scope: harness.UsagePerRun,
			onBudget: func(spent float64) { stopped = append(stopped, spent) }}
		batch := []harness.Event{
			{Kind: harness.KindUsage, Usage: &harness.Usage{CostUSD: 0.3}},
			{Kind: harness.KindUsage, Usage: &bad},
			{Kind: harness.KindSpend, Usage: &bad},
			{Kind: harness.KindUsage, Usage: &harness.Usage{CostUSD: 0.3}},
		}
		w.refuseInvalidUsage(batch)
		w.checkBudget(batch)
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
