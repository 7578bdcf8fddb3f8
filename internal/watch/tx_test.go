package watch_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/watch"
)

// TestApplyTxCommitsWithTheMessage: /watch on applied in the transaction
// that marks its message handled stores nothing and starts no watcher when
// that transaction fails after it; completed, it is stored and, once after
// ran, watched; a replay of the message applies nothing again.
func TestApplyTxCommitsWithTheMessage(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := start(t, root, filepath.Join(t.TempDir(), "fetch.db"), watch.Config{})
	ctx := t.Context()
	msg, _, err := r.db.AddInbound(ctx, store.NewInbound{ConversationID: conv, ExternalID: "m1", UserID: "100", Body: "/watch on web"})
	if err != nil {
		t.Fatal(err)
	}
	on, ok := instincts.New().Match("/watch on web", instincts.State{})
	if !ok || on.Effect != instincts.WatchOn {
		t.Fatalf("/watch on web → %+v", on)
	}
	stored := func() int {
		var n int
		if err := r.db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM watches").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	injected := errors.New("injected failure")
	var after func()
	_, err = r.db.CompleteWith(ctx, msg, func(tx *sql.Tx) ([]store.Outgoing, error) {
		var err error
		_, after, err = r.m.ApplyTx(ctx, tx, conv, "100", on)
		if err != nil {
			return nil, err
		}
		return nil, injected
	})
	if !errors.Is(err, injected) || after == nil {
		t.Fatalf("CompleteWith: err = %v, effect ran: %t; want the injected failure after the effect", err, after != nil)
	}
	if stored() != 0 || r.m.Watching("web") != "" {
		t.Fatalf("after a failed completion: %d stored, watching for %q", stored(), r.m.Watching("web"))
	}

	runs := 0
	effect := func(tx *sql.Tx) ([]store.Outgoing, error) {
		runs++
		reply, a, err := r.m.ApplyTx(ctx, tx, conv, "100", on)
		after = a
		return []store.Outgoing{{Body: reply}}, err
	}
	if _, err := r.db.CompleteWith(ctx, msg, effect); err != nil {
		t.Fatal(err)
	}
	after()
	if stored() != 1 || r.m.Watching("web") != conv {
		t.Fatalf("after completion: %d stored, watching for %q", stored(), r.m.Watching("web"))
	}
	if _, err := r.db.CompleteWith(ctx, msg, effect); !errors.Is(err, store.ErrConflict) || runs != 1 {
		t.Fatalf("replay: err = %v, effect ran %d times; want ErrConflict and once", err, runs)
	}
}
