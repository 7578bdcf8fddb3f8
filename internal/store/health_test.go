package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fetch-dev/fetch/internal/store"
)

// TestCheck: a healthy database is "ok" with its sizes, a missing one is
// reported missing (and not created), a damaged one names its problem.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fetch.db")
	h, err := store.Check(t.Context(), path)
	if err != nil || h.Exists {
		t.Fatalf("missing: %+v, %v", h, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Check created the database")
	}
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureConversation(t.Context(), "c1", "term", "u"); err != nil {
		t.Fatal(err)
	}
	h, err = store.Check(t.Context(), path)
	if err != nil || !h.Exists || h.Integrity != "ok" || h.Size == 0 || h.WALSize == 0 {
		t.Fatalf("open: %+v, %v", h, err)
	}
	db.Close()

	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, []byte("this is not a database at all, not even close, but long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h, err := store.Check(t.Context(), bad); err == nil && h.Integrity == "ok" {
		t.Fatalf("damaged: %+v", h)
	}
}
