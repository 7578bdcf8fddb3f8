package schedule_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/schedule"
	"github.com/fetch-dev/fetch/internal/store"
)

// txEnv is a store with one inbound /remind message not yet handled, and
// a scheduler (not running) on it.
type txEnv struct {
	db     *store.DB
	sched  *schedule.Scheduler
	msg    int64
	remind instincts.Response
}

func newTxEnv(t *testing.T) *txEnv {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureConversation(t.Context(), conv, "test", owner); err != nil {
		t.Fatal(err)
	}
	msg, _, err := db.AddInbound(t.Context(), store.NewInbound{ConversationID: conv, ExternalID: "m1", UserID: owner, Body: "/remind in 20m x"})
	if err != nil {
		t.Fatal(err)
	}
	return &txEnv{
		db:    db,
		sched: schedule.New(schedule.Config{Store: db, Logger: quiet()}),
		msg:   msg,
		remind: instincts.Response{
			Instinct: "remind", Effect: instincts.Remind, Reply: "OK",
			Job: instincts.Job{Kind: instincts.Reminder, Text: "x", At: time.Now().Add(20 * time.Minute)},
		},
	}
}

func (e *txEnv) jobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.db.SQL().QueryRowContext(t.Context(), "SELECT count(*) FROM schedules").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *txEnv) unhandled(t *testing.T) bool {
	t.Helper()
	ms, err := e.db.Unhandled(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(ms) == 1 && ms[0].ID == e.msg
}

// TestApplyTxCommitsWithTheMessage: a /remind applied in the transaction
// that marks its message handled is stored only if the whole transaction
// commits — a failure after the job was written leaves no job and the
// message unhandled, to be handled (once) after a restart.
func TestApplyTxCommitsWithTheMessage(t *testing.T) {
	injected := errors.New("injected failure")
	for _, tc := range []struct {
		name string
		// fail is called in the transaction once the job is written; it
		// returns the error to fail with, or ends the context.
		fail func(cancel context.CancelFunc) error
	}{
		{"effect fails after writing", func(context.CancelFunc) error { return injected }},
		{"queuing the reply fails", func(cancel context.CancelFunc) error { cancel(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTxEnv(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var after func()
			_, err := e.db.CompleteWith(ctx, e.msg, func(tx *sql.Tx) ([]store.Outgoing, error) {
				reply, a, err := e.sched.ApplyTx(ctx, tx, conv, owner, e.remind)
				if err != nil {
					return nil, err
				}
				after = a
				if err := tc.fail(cancel); err != nil {
					return nil, err
				}
				return []store.Outgoing{{Body: reply}}, nil
			})
			if err == nil {
				t.Fatal("CompleteWith succeeded; want the injected failure")
			}
			if after == nil {
				t.Fatal("the effect did not run")
			}
			if n := e.jobs(t); n != 0 {
				t.Fatalf("%d jobs stored after a failed completion; want 0", n)
			}
			if !e.unhandled(t) {
				t.Fatal("the message is not unhandled after a failed completion")
			}
		})
	}
}

// TestApplyTxRunsOnce: a message completed with its effect is not applied
// again when it is completed a second time (a replay): the effect does not
// run and the second completion is a conflict.
func TestApplyTxRunsOnce(t *testing.T) {
	e := newTxEnv(t)
	ctx := t.Context()
	runs := 0
	effect := func(tx *sql.Tx) ([]store.Outgoing, error) {
		runs++
		reply, _, err := e.sched.ApplyTx(ctx, tx, conv, owner, e.remind)
		return []store.Outgoing{{Body: reply}}, err
	}
	ids, err := e.db.CompleteWith(ctx, e.msg, effect)
	if err != nil || len(ids) != 1 {
		t.Fatalf("CompleteWith = %v, %v", ids, err)
	}
	if _, err := e.db.CompleteWith(ctx, e.msg, effect); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second CompleteWith: err = %v; want ErrConflict", err)
	}
	if runs != 1 || e.jobs(t) != 1 {
		t.Fatalf("effect ran %d times, %d jobs stored; want 1 and 1", runs, e.jobs(t))
	}
	if e.unhandled(t) {
		t.Fatal("message still unhandled")
	}
	unsent, err := e.db.Unsent(ctx, "")
	if err != nil || len(unsent) != 1 || unsent[0].Body != "OK [#1 — /cron remove 1 cancels it]" {
		t.Fatalf("outbox = %+v, %v", unsent, err)
	}
}
