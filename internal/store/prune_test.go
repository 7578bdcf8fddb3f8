package store_test

import (
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/google/go-cmp/cmp"
)

// TestPrune: what is old and done with goes (delivered messages, folded
// agent turns, ended tasks' events and patches); what is new or still to
// do stays, and so does the whole audit log. A dry run counts the same
// and changes nothing.
func TestPrune(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := old.AddDate(0, 6, 0)
	db.Now = func() time.Time { return old }
	if _, err := db.EnsureConversation(ctx, "c1", "discord", "42"); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.SQL().ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Old: a handled message and its sent reply, an unhandled message and
	// an unsent reply.
	handled, _, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "m1", UserID: "42", Body: "hello", InHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := db.Complete(ctx, handled, []store.Outgoing{{Body: "sent"}, {Body: "unsent"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.MarkSent(ctx, outs[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "m2", UserID: "42", Body: "waiting"}); err != nil {
		t.Fatal(err)
	}
	exec("INSERT INTO agent_turns (conversation_id, intent, created_at, compacted) VALUES ('c1', 'action', ?, 1)", store.FormatTime(old))
	exec("INSERT INTO agent_turns (conversation_id, intent, created_at, compacted) VALUES ('c1', 'action', ?, 0)", store.FormatTime(old))
	task := func(id, state string, ended time.Time) {
		var e any
		if !ended.IsZero() {
			e = store.FormatTime(ended)
		}
		exec("INSERT INTO tasks (id, workspace, goal, harness, state, patch, patch_path, created_at, ended_at, updated_at) VALUES (?, 'ws', 'g', 'claude', ?, 'diff', '/p/'||?||'.patch', ?, ?, ?)",
			id, state, id, store.FormatTime(old), e, store.FormatTime(old))
		exec("INSERT INTO task_events (task_id, at, kind, data) VALUES (?, ?, 'state', '{}')", id, store.FormatTime(old))
	}
	task("ended-old", "succeeded", old)
	task("ended-new", "failed", now.Add(-time.Hour))
	task("running", "running", time.Time{})
	for _, a := range []string{"approve", "merge"} {
		if err := db.Audit(ctx, store.AuditEntry{ConversationID: "c1", Actor: "owner", Action: a}); err != nil {
			t.Fatal(err)
		}
	}
	db.Now = func() time.Time { return now }
	if _, _, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "m3", UserID: "42", Body: "new"}); err != nil {
		t.Fatal(err)
	}

	want := store.Pruned{Counts: map[string]int{"messages": 2, "agent turns": 1, "task events": 1, "patches": 1}, PatchTasks: []string{"ended-old"}}
	cut := now.AddDate(0, 0, -90)
	for _, dry := range []bool{true, false} {
		got, err := db.Prune(ctx, cut, dry)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("prune (dry %v) (-want +got):\n%s", dry, diff)
		}
	}
	again, err := db.Prune(ctx, cut, false)
	if err != nil || again.Counts["messages"]+again.Counts["task events"]+again.Counts["patches"]+again.Counts["agent turns"] != 0 {
		t.Fatalf("a second prune: %+v, %v; want nothing left", again, err)
	}
	count := func(q string) int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("SELECT COUNT(*) FROM messages"); n != 3 {
		t.Errorf("%d messages left; want the unsent reply, the unhandled message and the new one", n)
	}
	if n := count("SELECT COUNT(*) FROM task_events"); n != 2 {
		t.Errorf("%d task events left; want the new and the running task's", n)
	}
	if n := count("SELECT COUNT(*) FROM tasks WHERE patch = 'diff'"); n != 2 {
		t.Errorf("%d patches left; want 2", n)
	}
	if n := count("SELECT COUNT(*) FROM tasks"); n != 3 {
		t.Errorf("%d tasks left; want all 3", n)
	}
	log, err := db.AuditEntries(ctx, store.AuditQuery{})
	if err != nil || len(log) != 2 {
		t.Fatalf("audit after prune: %+v, %v; want both entries", log, err)
	}
}

// TestAuditEntries: since, action and limit select; the newest entries
// are kept by the limit, listed oldest first.
func TestAuditEntries(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, a := range []string{"approve", "merge", "push", "approve", "deny"} {
		if err := db.Audit(ctx, store.AuditEntry{At: start.Add(time.Duration(i) * time.Hour), Actor: "owner", Action: a, Detail: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q    store.AuditQuery
		want string
	}{
		{store.AuditQuery{}, "abcde"},
		{store.AuditQuery{Limit: 2}, "de"},
		{store.AuditQuery{Since: start.Add(2 * time.Hour)}, "cde"},
		{store.AuditQuery{Action: "approve"}, "ad"},
		{store.AuditQuery{Action: "approve", Limit: 1}, "d"},
		{store.AuditQuery{Since: start.Add(10 * time.Hour)}, ""},
	} {
		got, err := db.AuditEntries(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var s string
		for _, e := range got {
			s += e.Detail
		}
		if s != tc.want {
			t.Errorf("%+v: %q; want %q", tc.q, s, tc.want)
		}
	}
}
