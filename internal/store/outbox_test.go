package store_test

import (
	"path/filepath"
	"testing"

	"github.com/fetch-dev/fetch/internal/store"
)

// TestSendAttempts: a reply handed to its channel but never marked sent
// (the process stopped in between, or the sent mark failed) is listed at
// the next start as attempted, in its place among the unsent; a send the
// channel reported failed counts as never attempted; a sent reply is not
// listed whatever was attempted.
func TestSendAttempts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c", "term", "u"); err != nil {
		t.Fatal(err)
	}
	ids, err := db.AddOutbound(ctx, "c", store.Outgoing{Body: "sent"}, store.Outgoing{Body: "attempted"}, store.Outgoing{Body: "failed"}, store.Outgoing{Body: "queued"})
	if err != nil {
		t.Fatal(err)
	}
	sent, attempted, failed := ids[0], ids[1], ids[2]
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"sending sent", func() error { return db.MarkSending(ctx, sent) }},
		{"sent", func() error { return db.MarkSent(ctx, sent) }},
		{"sending sent again", func() error { return db.MarkSending(ctx, sent) }},
		{"sending attempted", func() error { return db.MarkSending(ctx, attempted) }},
		{"sending failed", func() error { return db.MarkSending(ctx, failed) }},
		{"failed", func() error { return db.MarkSendFailed(ctx, failed) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
	// The next start.
	db.Close()
	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	unsent, err := db.Unsent(ctx, "term")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range unsent {
		state := "never handed over"
		if m.SendAttemptedAt != nil {
			state = "attempted"
		}
		got = append(got, m.Body+": "+state)
	}
	want := []string{"attempted: attempted", "failed: never handed over", "queued: never handed over"}
	if len(got) != len(want) {
		t.Fatalf("unsent = %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("unsent = %q; want %q", got, want)
		}
	}
	// The caller settles the attempted one as delivered.
	if err := db.MarkSent(ctx, attempted); err != nil {
		t.Fatal(err)
	}
	if unsent, err := db.Unsent(ctx, ""); err != nil || len(unsent) != 2 {
		t.Fatalf("after settling: %d unsent, %v; want 2", len(unsent), err)
	}
}
