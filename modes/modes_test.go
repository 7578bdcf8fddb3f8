package modes_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/modes"
)

var allModes = []modes.Mode{modes.Alert, modes.Working, modes.Waiting, modes.Guarding, modes.Resting}

var fixedEvents = []modes.Event{
	modes.TaskStarted, modes.Asked, modes.Answered, modes.Guarded, modes.Denied,
	modes.IdleTimeout, modes.Woke, modes.TaskEnded, modes.Settled,
}

// legal is the transition list, written out independently of the
// package's table.
var legal = map[modes.Mode]map[modes.Event]modes.Mode{
	modes.Alert:    {modes.TaskStarted: modes.Working, modes.Asked: modes.Waiting, modes.Guarded: modes.Guarding, modes.IdleTimeout: modes.Resting},
	modes.Working:  {modes.Asked: modes.Waiting, modes.Guarded: modes.Guarding, modes.TaskEnded: modes.Alert, modes.Settled: modes.Alert},
	modes.Waiting:  {modes.Answered: modes.Working, modes.Guarded: modes.Guarding, modes.TaskEnded: modes.Alert},
	modes.Guarding: {modes.Denied: modes.Alert, modes.TaskEnded: modes.Alert},
	modes.Resting:  {modes.Woke: modes.Alert},
}

func openStore(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// machineIn returns a machine driven into mode m along legal transitions.
func machineIn(t *testing.T, db *store.DB, conv string, m modes.Mode) *modes.Machine {
	t.Helper()
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, conv, "term", "u"); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	mc, err := modes.Load(ctx, db, conv, c.now)
	if err != nil {
		t.Fatal(err)
	}
	path := map[modes.Mode][]modes.Event{
		modes.Alert:    nil,
		modes.Working:  {modes.TaskStarted},
		modes.Waiting:  {modes.TaskStarted, modes.Asked},
		modes.Guarding: {modes.TaskStarted, modes.Guarded},
		modes.Resting:  {modes.IdleTimeout},
	}[m]
	for _, e := range path {
		if err := mc.Fire(ctx, e, "setup"); err != nil {
			t.Fatalf("setup %s: %v", e, err)
		}
	}
	if mc.Current() != m {
		t.Fatalf("setup reached %s, want %s", mc.Current(), m)
	}
	return mc
}

func TestEveryTransition(t *testing.T) {
	db := openStore(t)
	n := 0
	for _, from := range allModes {
		for _, ev := range fixedEvents {
			n++
			conv := string(from) + "-" + string(ev)
			t.Run(conv, func(t *testing.T) {
				m := machineIn(t, db, conv, from)
				before, _ := db.ModeHistory(t.Context(), conv)
				err := m.Fire(t.Context(), ev, "because")
				after, _ := db.ModeHistory(t.Context(), conv)
				want, ok := legal[from][ev]
				if !ok {
					var ill *modes.IllegalError
					if !errors.As(err, &ill) || !errors.Is(err, modes.ErrIllegal) || ill.From != from || ill.Event != ev {
						t.Fatalf("%s in %s: err = %v; want IllegalError", ev, from, err)
					}
					if m.Current() != from || len(after) != len(before) {
						t.Fatalf("illegal event changed something: mode %s, history %d→%d", m.Current(), len(before), len(after))
					}
					return
				}
				if err != nil {
					t.Fatalf("%s in %s: %v", ev, from, err)
				}
				if m.Current() != want {
					t.Fatalf("%s in %s → %s; want %s", ev, from, m.Current(), want)
				}
				st, err := db.Mode(t.Context(), conv)
				if err != nil || st.Mode != string(want) || st.Previous != string(from) || st.Reason != "because" {
					t.Fatalf("stored = %+v, %v", st, err)
				}
				if len(after) != len(before)+1 {
					t.Fatalf("history grew %d→%d", len(before), len(after))
				}
				last := after[len(after)-1]
				if last.From != string(from) || last.To != string(want) || last.Event != string(ev) || last.Reason != "because" {
					t.Fatalf("history row = %+v", last)
				}
			})
		}
	}
	if n != len(allModes)*len(fixedEvents) {
		t.Fatal("matrix incomplete")
	}
}

func TestApproveReturnsWhereItWas(t *testing.T) {
	db := openStore(t)
	for _, tc := range []struct {
		from modes.Mode
		want modes.Mode
	}{
		{modes.Alert, modes.Alert},
		{modes.Working, modes.Working},
		{modes.Waiting, modes.Waiting},
	} {
		t.Run(string(tc.from), func(t *testing.T) {
			m := machineIn(t, db, "approve-"+string(tc.from), tc.from)
			if err := m.Fire(t.Context(), modes.Guarded, "delete demo"); err != nil {
				t.Fatal(err)
			}
			if err := m.Approve(t.Context(), "owner said yes"); err != nil {
				t.Fatal(err)
			}
			if m.Current() != tc.want {
				t.Fatalf("approved → %s; want %s", m.Current(), tc.want)
			}
		})
	}
	for _, from := range []modes.Mode{modes.Alert, modes.Working, modes.Waiting, modes.Resting} {
		m := machineIn(t, db, "approve-illegal-"+string(from), from)
		if err := m.Approve(t.Context(), "x"); !errors.Is(err, modes.ErrIllegal) {
			t.Fatalf("approve in %s: %v; want ErrIllegal", from, err)
		}
	}
}

// failingStore refuses every change after the first.
type failingStore struct {
	*store.DB
	fail bool
}

func (f *failingStore) ChangeMode(ctx context.Context, c store.ModeChange) error {
	if f.fail {
		return errors.New("disk full")
	}
	return f.DB.ChangeMode(ctx, c)
}

func TestFailedWriteLeavesModeAlone(t *testing.T) {
	db := openStore(t)
	if _, err := db.EnsureConversation(t.Context(), "c", "term", "u"); err != nil {
		t.Fatal(err)
	}
	fs := &failingStore{DB: db}
	m, err := modes.Load(t.Context(), fs, "c", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fs.fail = true
	if err := m.Fire(t.Context(), modes.TaskStarted, "t1"); err == nil {
		t.Fatal("fire succeeded with a failing store")
	}
	if m.Current() != modes.Alert {
		t.Fatalf("mode moved to %s without being persisted", m.Current())
	}
	fs.fail = false
	if err := m.Fire(t.Context(), modes.TaskStarted, "t1"); err != nil || m.Current() != modes.Working {
		t.Fatalf("after recovery: %v %s", err, m.Current())
	}
}

func TestRestartRules(t *testing.T) {
	db := openStore(t)
	for _, tc := range []struct {
		stored modes.Mode
		live   modes.Live
		want   modes.Mode
	}{
		{modes.Alert, modes.Live{TaskRunning: true}, modes.Alert},
		{modes.Resting, modes.Live{}, modes.Resting},
		{modes.Working, modes.Live{}, modes.Alert},
		{modes.Working, modes.Live{TaskRunning: true}, modes.Working},
		{modes.Waiting, modes.Live{}, modes.Alert},
		{modes.Waiting, modes.Live{TaskRunning: true}, modes.Working},
		{modes.Waiting, modes.Live{QuestionOpen: true, TaskRunning: true}, modes.Waiting},
		{modes.Guarding, modes.Live{}, modes.Alert},
		{modes.Guarding, modes.Live{ApprovalOpen: true}, modes.Guarding},
		{modes.Guarding, modes.Live{TaskRunning: true}, modes.Working},
	} {
		name := string(tc.stored) + "-" + string(tc.want)
		if tc.live.TaskRunning {
			name += "-running"
		}
		t.Run(name, func(t *testing.T) {
			conv := "restart-" + name
			machineIn(t, db, conv, tc.stored)
			// A new process loads the stored mode.
			m, err := modes.Load(t.Context(), db, conv, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if m.Current() != tc.stored {
				t.Fatalf("loaded %s; want %s", m.Current(), tc.stored)
			}
			changed, err := m.Reconcile(t.Context(), tc.live)
			if err != nil {
				t.Fatal(err)
			}
			if m.Current() != tc.want || changed != (tc.want != tc.stored) {
				t.Fatalf("reconciled to %s (changed=%v); want %s", m.Current(), changed, tc.want)
			}
			st, _ := db.Mode(t.Context(), conv)
			if st.Mode != string(tc.want) {
				t.Fatalf("stored %s; want %s", st.Mode, tc.want)
			}
			if changed {
				h, _ := db.ModeHistory(t.Context(), conv)
				if h[len(h)-1].Event != string(modes.Reconciled) {
					t.Fatalf("last history event %q; want reconciled", h[len(h)-1].Event)
				}
			}
		})
	}
}

func TestLoadNewConversationIsAlert(t *testing.T) {
	db := openStore(t)
	if _, err := db.EnsureConversation(t.Context(), "c", "term", "u"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := modes.Load(t.Context(), db, "c", func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	if m.Current() != modes.Alert || !m.Since().Equal(at) {
		t.Fatalf("new: %s since %v", m.Current(), m.Since())
	}
	h, _ := db.ModeHistory(t.Context(), "c")
	if len(h) != 1 || h[0].To != "ALERT" || h[0].From != "" {
		t.Fatalf("history = %+v", h)
	}
}
