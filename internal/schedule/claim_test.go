package schedule

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

type fixedClock time.Time

func (c fixedClock) Now() time.Time                     { return time.Time(c) }
func (fixedClock) After(time.Duration) <-chan time.Time { return nil }

// TestClaimOnce: of two runners that read the same due run, only the
// first to claim it sends it.
func TestClaimOnce(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.EnsureConversation(ctx, "c", "test", "u"); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := New(Config{Store: db, Clock: fixedClock(now), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e, err := s.Add(ctx, "c", "u", instincts.Job{Kind: instincts.Reminder, Text: "x", At: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !s.claim(ctx, e, time.Time{}, Done) {
		t.Fatal("first claim failed")
	}
	if s.claim(ctx, e, time.Time{}, Done) {
		t.Fatal("the same run was claimed twice")
	}
}
