package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/mattn/go-sqlite3"
)

// openNoBusyWait opens a database on which SQLite never waits for a
// writer: any two writes of this process that met in SQLite would fail at
// once with SQLITE_BUSY.
func openNoBusyWait(t testing.TB, writer time.Duration) *store.DB {
	t.Helper()
	db, err := store.OpenWaiting(t.Context(), filepath.Join(t.TempDir(), "fetch.db"), 0, writer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConcurrentWritersNeverBusy: many goroutines writing through every
// path — the store's methods, its transactions and SQL() used directly for
// Exec, Query with RETURNING and transactions — never meet in SQLite,
// even with SQLite's busy timeout off: the write lock queues them.
func TestConcurrentWritersNeverBusy(t *testing.T) {
	db := openNoBusyWait(t, 10*time.Second)
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c", "test", "u"); err != nil {
		t.Fatal(err)
	}
	const goroutines, rounds = 16, 25
	errs := make(chan error, goroutines*rounds)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				if err := writeOnce(ctx, db, g, i); err != nil {
					errs <- fmt.Errorf("goroutine %d round %d: %w", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE direction = 'in' AND handled_at IS NOT NULL").Scan(&n); err != nil || n != goroutines*rounds {
		t.Fatalf("handled = %d, %v; want %d", n, err, goroutines*rounds)
	}
}

// writeOnce is one message's worth of writes, the way Fetch makes them.
func writeOnce(ctx context.Context, db *store.DB, g, i int) error {
	id, _, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c", ExternalID: fmt.Sprintf("%d-%d", g, i), UserID: "u", Body: "hi"})
	if err != nil {
		return err
	}
	ids, err := db.Complete(ctx, id, []store.Outgoing{{Body: "hello"}})
	if err != nil {
		return err
	}
	if err := db.MarkSent(ctx, ids[0]); err != nil {
		return err
	}
	if err := db.Audit(ctx, store.AuditEntry{ConversationID: "c", Actor: "u", Action: "test"}); err != nil {
		return err
	}
	if _, err := db.SQL().ExecContext(ctx, "INSERT INTO audit (at, conversation_id, actor, action, detail) VALUES (?, 'c', 'u', 'raw', '')", store.FormatTime(time.Now())); err != nil {
		return err
	}
	var back int64
	if err := db.SQL().QueryRowContext(ctx, "UPDATE messages SET extra = 'x' WHERE id = ? RETURNING id", ids[0]).Scan(&back); err != nil {
		return err
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE conversations SET workspace = ? WHERE id = 'c'", fmt.Sprint(g)); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestWriteInsideTransactionFailsAsBusy: a transaction that writes through
// a second connection waits for itself; it fails as SQLite would have
// failed it (busy), after the wait, instead of hanging.
func TestWriteInsideTransactionFailsAsBusy(t *testing.T) {
	db := openNoBusyWait(t, 50*time.Millisecond)
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c", "test", "u"); err != nil {
		t.Fatal(err)
	}
	var inner error
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		inner = db.SetWorkspace(ctx, "c", "w")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var se sqlite3.Error
	if !errors.As(inner, &se) || se.Code != sqlite3.ErrBusy {
		t.Fatalf("nested write: err = %v; want SQLITE_BUSY", inner)
	}
	// The lock was given back: the next write goes through.
	if err := db.SetWorkspace(ctx, "c", "w"); err != nil {
		t.Fatal(err)
	}
}

// TestWriterOfAnotherProcessIsWaitedOut: a writer outside this process
// (here a plain connection, as fetch task beside fetch serve) is waited out
// by SQLite's busy timeout, as before.
func TestWriterOfAnotherProcessIsWaitedOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c", "test", "u"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	held := 100 * time.Millisecond
	committed := make(chan error, 1)
	time.AfterFunc(held, func() {
		_, err := conn.ExecContext(context.Background(), "COMMIT")
		committed <- err
	})
	t0 := time.Now()
	if err := db.SetWorkspace(ctx, "c", "w"); err != nil {
		t.Fatalf("write while another process writes: %v", err)
	}
	if waited := time.Since(t0); waited < held/2 {
		t.Fatalf("write took %s while the other writer held the lock for %s", waited, held)
	}
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
}
