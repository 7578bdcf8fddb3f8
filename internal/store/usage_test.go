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
