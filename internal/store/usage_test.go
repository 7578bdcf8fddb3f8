package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

func TestUsageAndGrants(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
	db.Now = func() time.Time { return day }
	for _, u := range []store.Usage{{PromptTokens: 100, CompletionTokens: 20, Cost: 0.5}, {PromptTokens: 10, CompletionTokens: 5, Cost: 0.25}} {
		if err := db.AddUsage(ctx, "c1", u); err != nil {
			t.Fatal(err)
		}
	}
	db.Now = func() time.Time { return day.Add(2 * time.Minute) } // the next UTC day
	if err := db.AddUsage(ctx, "c1", store.Usage{PromptTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := db.Grant(ctx, store.Day(day), 500, 1.5); err != nil {
		t.Fatal(err)
	}
	spent, granted, err := db.Spent(ctx, store.Day(day))
	if err != nil || spent.Tokens() != 135 || spent.Cost != 0.75 || granted.Tokens != 500 || granted.Cost != 1.5 {
		t.Fatalf("spent %+v granted %+v, %v", spent, granted, err)
	}
	if spent, _, _ := db.Spent(ctx, "2000-01-01"); spent.Tokens() != 0 || spent.Cost != 0 {
		t.Fatalf("empty day: %+v", spent)
	}
}

func TestAutonomyKeptAcrossClear(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	c, err := db.EnsureConversation(ctx, "c1", "term", "u")
	if err != nil || c.Autonomy != "cautious" {
		t.Fatalf("default autonomy %q, %v", c.Autonomy, err)
	}
	if err := db.SetAutonomy(ctx, "c1", "autonomous"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetAutonomy(ctx, "nope", "autonomous"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown conversation: %v", err)
	}
	if err := db.ClearHistory(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.Conversation(ctx, "c1"); c.Autonomy != "autonomous" {
		t.Fatalf("autonomy after clear: %q", c.Autonomy)
	}
}

// TestDaySpendAndAttribution: the day's spend is the CLI cost of the
// day's tasks plus every completion of the day, each counted once; the
// completions of a turn since it began are tied to its task, whose total
// becomes its CLI cost plus theirs.
func TestDaySpendAndAttribution(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return day }
	if err := db.AddUsage(ctx, "c1", store.Usage{Cost: 0.01}); err != nil { // an earlier turn
		t.Fatal(err)
	}
	turn := day.Add(time.Minute)
	db.Now = func() time.Time { return turn.Add(time.Second) }
	for range 2 {
		if err := db.AddUsage(ctx, "c1", store.Usage{Cost: 0.02}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.SQL().ExecContext(ctx, `INSERT INTO tasks (id, workspace, goal, harness, state, created_at, updated_at, cli_cost_usd, cost_usd)
		VALUES ('t1', 'app', 'g', 'claude', 'running', ?, ?, 0.5, 0.5), ('t0', 'app', 'g', 'claude', 'failed', '2026-11-21T10:00:00.000000000Z', ?, 9, 9)`,
		store.FormatTime(turn), store.FormatTime(turn), store.FormatTime(turn))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AttributeUsage(ctx, "c1", turn, "t1"); err != nil {
		t.Fatal(err)
	}
	var total float64
	if err := db.SQL().QueryRowContext(ctx, "SELECT cost_usd FROM tasks WHERE id = 't1'").Scan(&total); err != nil {
		t.Fatal(err)
	}
	if diff := total - 0.54; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("task total %v, want 0.5 CLI + 0.04 of its turn", total)
	}
	spent, err := db.DaySpend(ctx, store.Day(day))
	if diff := spent - 0.55; err != nil || diff > 1e-9 || diff < -1e-9 {
		t.Errorf("day spend %v, %v; want 0.5 (task) + 0.05 (all completions, once)", spent, err)
	}
}
