package schedule_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/schedule"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	owner = "100"
	conv  = "dm:100"
)

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// echo is an agent that answers "done: TEXT".
type echo struct{}

func (echo) Respond(_ context.Context, t conversation.Turn) ([]chat.Reply, error) {
	return []chat.Reply{chat.Text("done: " + t.Text)}, nil
}

// fired is one delivery with the test clock's time when it happened.
type fired struct {
	at   time.Time
	text string
}

// timing is a Deliverer in front of the real conversation runtime that
// notes when (on the test clock) each reminder and run was delivered.
type timing struct {
	schedule.Deliverer
	clk *testkit.Clock
	mu  sync.Mutex
	log []fired
}

func (d *timing) NotifyOnce(ctx context.Context, id, key string, r chat.Reply) error {
	d.note(r.Text)
	return d.Deliverer.NotifyOnce(ctx, id, key, r)
}

func (d *timing) Receive(ctx context.Context, m chat.Message) error {
	d.note("run " + m.ExternalID + ": " + m.Text)
	return d.Deliverer.Receive(ctx, m)
}

func (d *timing) note(text string) {
	d.mu.Lock()
	d.log = append(d.log, fired{d.clk.Now(), text})
	d.mu.Unlock()
}

func (d *timing) fired() []fired {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]fired(nil), d.log...)
}

// rig is one Fetch process: database, conversation runtime and scheduler.
type rig struct {
	db    *store.DB
	rec   *testkit.Recorder
	mgr   *conversation.Manager
	sched *schedule.Scheduler
	out   *timing
	set   *instincts.Set
	loc   *time.Location
	clk   *testkit.Clock
}

func start(t testing.TB, path string, clk *testkit.Clock, loc *time.Location) *rig {
	t.Helper()
	return startMeasured(t, path, clk, loc, nil)
}

// startMeasured is start with the scheduler's Metrics.
func startMeasured(t testing.TB, path string, clk *testkit.Clock, loc *time.Location, m schedule.Metrics) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureConversation(ctx, conv, "test", owner); err != nil {
		t.Fatal(err)
	}
	r := &rig{db: db, rec: testkit.NewRecorder(), set: instincts.New(), loc: loc, clk: clk}
	r.mgr = conversation.New(conversation.Config{
		Store:   db,
		Senders: map[string]chat.Sender{"test": r.rec},
		Agent:   echo{},
		RoleOf: func(_, userID string) chat.Role {
			if userID == owner {
				return chat.Owner
			}
			return ""
		},
		Logger: quiet(),
		Now:    clk.Now,
	})
	if err := r.mgr.Open(ctx); err != nil {
		t.Fatal(err)
	}
	r.sched = schedule.New(schedule.Config{Store: db, Location: loc, Clock: clk, Logger: quiet(), Metrics: m})
	r.out = &timing{Deliverer: r.mgr, clk: clk}
	if err := r.sched.Open(ctx, r.out); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) stop() {
	ctx := context.Background()
	r.sched.Close(ctx)
	r.mgr.Close(ctx)
	r.db.Close()
}

// apply sends text through the instincts and the scheduler, as the
// conversation does, and returns the reply.
func (r *rig) apply(t testing.TB, text string) string {
	t.Helper()
	res, ok := r.set.Match(text, instincts.State{Now: r.clk.Now(), UserID: owner, Location: r.loc})
	if !ok {
		t.Fatalf("%q is not an instinct", text)
	}
	if res.Effect == instincts.None {
		return res.Reply
	}
	reply, err := r.sched.Apply(t.Context(), conv, owner, res)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return reply
}

// advanceTo moves the clock from timer to timer up to until, letting the
// runner finish each step (it sets its next timer only when done).
func advanceTo(t testing.TB, clk *testkit.Clock, until time.Time) {
	t.Helper()
	for {
		at := clk.NextTimer(t)
		if at.After(until) {
			clk.Set(until)
			return
		}
		clk.Set(at)
	}
}

func texts(fs []fired) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.text)
	}
	return out
}

func TestReminderDeliveredOnce(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	clk := testkit.NewClock(t0)
	r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)

	reply := r.apply(t, "/remind in 20m check the deploy")
	if !strings.Contains(reply, "Sun 22 Nov 15:50 CET") || !strings.Contains(reply, "#1") {
		t.Fatalf("confirmation = %q", reply)
	}
	advanceTo(t, clk, t0.Add(19*time.Minute))
	if got := r.out.fired(); len(got) != 0 {
		t.Fatalf("fired early: %+v", got)
	}
	advanceTo(t, clk, t0.Add(3*time.Hour))
	got := r.out.fired()
	if len(got) != 1 || got[0].text != "⏰ Reminder: check the deploy" || !got[0].at.Equal(t0.Add(20*time.Minute)) {
		t.Fatalf("deliveries = %+v; want one at 15:50", got)
	}
	if err := r.mgr.Idle(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
	if sent := r.rec.Texts(); len(sent) != 1 || sent[0] != "⏰ Reminder: check the deploy" {
		t.Fatalf("channel got %q", sent)
	}
	if list := r.apply(t, "/cron list"); !strings.Contains(list, "no reminders") {
		t.Fatalf("done reminder still listed: %q", list)
	}
}

// TestTwoProcessesDeliverOnce: two schedulers on one database (two fetch
// processes), woken by the same clock, send each reminder to the owner
// once between them.
func TestTwoProcessesDeliverOnce(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	path := filepath.Join(t.TempDir(), "fetch.db")
	clk := testkit.NewClock(t0)
	a := start(t, path, clk, loc)
	b := start(t, path, clk, loc)
	for i := range 20 {
		a.apply(t, fmt.Sprintf("/remind in 5m item %d", i))
	}
	advanceTo(t, clk, t0.Add(time.Hour))
	// Both runners asleep again: everything due was handed over.
	clk.WaitSleepers(t, 2)
	// Handed over means queued: wait until both outboxes delivered.
	for _, r := range []*rig{a, b} {
		if err := r.mgr.Idle(t.Context(), conv); err != nil {
			t.Fatal(err)
		}
	}
	// Both may hand a reminder over; what reaches the owner counts.
	all := append(a.rec.Texts(), b.rec.Texts()...)
	seen := map[string]bool{}
	for _, s := range all {
		if seen[s] {
			t.Fatalf("%q delivered twice", s)
		}
		seen[s] = true
	}
	if len(seen) != 20 {
		t.Fatalf("delivered %d of 20 reminders", len(seen))
	}
}

func TestReminderSurvivesRestart(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	path := filepath.Join(t.TempDir(), "fetch.db")
	clk := testkit.NewClock(t0)
	r := start(t, path, clk, loc)
	r.apply(t, "/remind at 18:30 call Bob")
	advanceTo(t, clk, t0.Add(time.Hour))
	r.stop()

	// Down for an hour, back before the reminder is due.
	clk.Set(t0.Add(2 * time.Hour))
	r2 := start(t, path, clk, loc)
	advanceTo(t, clk, t0.Add(5*time.Hour))
	got := r2.out.fired()
	if len(got) != 1 || got[0].text != "⏰ Reminder: call Bob" || !got[0].at.Equal(time.Date(2026, 11, 22, 18, 30, 0, 0, loc)) {
		t.Fatalf("after restart: %+v; want call Bob at 18:30", got)
	}
	if len(r.out.fired()) != 0 {
		t.Fatalf("first process delivered %q", texts(r.out.fired()))
	}
}

// TestMissedRunPolicy: after downtime a missed reminder fires once, at
// start, marked late; a recurring schedule skips the runs it missed (logged
// and audited) and carries on with the next.
func TestMissedRunPolicy(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	path := filepath.Join(t.TempDir(), "fetch.db")
	clk := testkit.NewClock(t0)
	r := start(t, path, clk, loc)
	r.apply(t, "/remind in 20m check the deploy")
	r.apply(t, `/schedule "*/10 * * * *" remind drink water`)
	r.stop()

	clk.Set(t0.Add(2*time.Hour + 5*time.Minute)) // 17:35: back after missing the reminder and 12 runs
	r2 := start(t, path, clk, loc)
	advanceTo(t, clk, time.Date(2026, 11, 22, 17, 55, 0, 0, loc))
	got := r2.out.fired()
	want := []string{
		"⏰ Reminder (due Sun 22 Nov 15:50 CET; Fetch was not running then): check the deploy",
		"⏰ drink water (schedule #2)",
		"⏰ drink water (schedule #2)",
	}
	if strings.Join(texts(got), "|") != strings.Join(want, "|") {
		t.Fatalf("deliveries = %q; want %q", texts(got), want)
	}
	if !got[0].at.Equal(clk.Now().Add(-20*time.Minute)) || got[1].at.Format("15:04") != "17:40" || got[2].at.Format("15:04") != "17:50" {
		t.Fatalf("delivery times = %v, %v, %v; want 17:35, 17:40, 17:50", got[0].at, got[1].at, got[2].at)
	}
	log, err := r2.db.AuditLog(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	var missed []string
	for _, e := range log {
		if e.Action == "schedule_missed" {
			missed = append(missed, e.Detail)
		}
	}
	if len(missed) != 1 || !strings.Contains(missed[0], "12 missed runs since Sun 22 Nov 15:40 CET skipped") {
		t.Fatalf("audit of missed runs = %q", missed)
	}
}

// TestCronAcrossDST drives schedules over the spring and autumn changes in
// Berlin: a daily 09:00 stays at 09:00 on the wall clock, and an hourly
// :30 fires every real hour (02:30 does not exist on the spring night).
func TestCronAcrossDST(t *testing.T) {
	loc := berlin(t)
	for _, tc := range []struct {
		name  string
		start time.Time
		until time.Time
		spec  string
		want  []string // local times of the runs
	}{
		{
			name: "daily across spring", spec: "0 9 * * *",
			start: time.Date(2026, 3, 27, 12, 0, 0, 0, loc), until: time.Date(2026, 3, 31, 10, 0, 0, 0, loc),
			want: []string{"2026-03-28 09:00 CET", "2026-03-29 09:00 CEST", "2026-03-30 09:00 CEST", "2026-03-31 09:00 CEST"},
		},
		{
			name: "daily across autumn", spec: "0 9 * * *",
			start: time.Date(2026, 10, 24, 12, 0, 0, 0, loc), until: time.Date(2026, 10, 26, 10, 0, 0, 0, loc),
			want: []string{"2026-10-25 09:00 CET", "2026-10-26 09:00 CET"},
		},
		{
			name: "hourly across spring", spec: "30 * * * *",
			start: time.Date(2026, 3, 29, 0, 0, 0, 0, loc), until: time.Date(2026, 3, 29, 4, 0, 0, 0, loc),
			want: []string{"2026-03-29 00:30 CET", "2026-03-29 01:30 CET", "2026-03-29 03:30 CEST"},
		},
		{
			name: "weekdays", spec: "15 8 * * 1-5",
			start: time.Date(2026, 3, 27, 12, 0, 0, 0, loc), until: time.Date(2026, 4, 1, 0, 0, 0, 0, loc),
			want: []string{"2026-03-30 08:15 CEST", "2026-03-31 08:15 CEST"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testkit.NewClock(tc.start)
			r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)
			r.apply(t, fmt.Sprintf("/schedule %q remind tick", tc.spec))
			advanceTo(t, clk, tc.until)
			var at []string
			for _, f := range r.out.fired() {
				at = append(at, f.at.In(loc).Format("2006-01-02 15:04 MST"))
			}
			if strings.Join(at, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("runs at %q; want %q", at, tc.want)
			}
		})
	}
}

// TestScheduledRunGoesThroughThePipeline: a "run" schedule reaches the
// agent as the owner's message, once per run, with a unique external id.
func TestScheduledRunGoesThroughThePipeline(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, loc) // a Friday
	clk := testkit.NewClock(t0)
	r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)
	reply := r.apply(t, `/schedule "0 9 * * 1-5" summarize open PRs`)
	if !strings.Contains(reply, "as if you wrote it") || !strings.Contains(reply, "next run Mon 23 Nov 09:00 CET") {
		t.Fatalf("confirmation = %q", reply)
	}
	advanceTo(t, clk, time.Date(2026, 11, 24, 12, 0, 0, 0, loc))
	if err := r.mgr.Idle(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"🔁 Schedule #1 (Mon 23 Nov 09:00 CET): summarize open PRs", "done: summarize open PRs",
		"🔁 Schedule #1 (Tue 24 Nov 09:00 CET): summarize open PRs", "done: summarize open PRs",
	}
	if got := r.rec.Texts(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("conversation got %q; want %q", got, want)
	}
	hist, err := r.db.History(t.Context(), conv, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range hist {
		if m.Direction == store.Inbound {
			ids = append(ids, m.ExternalID+" from "+m.UserID)
		}
	}
	mon, tue := time.Date(2026, 11, 23, 9, 0, 0, 0, loc).Unix(), time.Date(2026, 11, 24, 9, 0, 0, 0, loc).Unix()
	if wantIDs := fmt.Sprintf("sched:1:%d from 100|sched:1:%d from 100", mon, tue); strings.Join(ids, "|") != wantIDs {
		t.Fatalf("inbound = %q; want %q", ids, wantIDs)
	}
	// Handing the same run over again (a restart mid-run) is dropped.
	if err := r.mgr.Receive(t.Context(), chat.Message{Channel: "test", ConversationID: conv, ExternalID: fmt.Sprintf("sched:1:%d", mon), UserID: owner, Text: "summarize open PRs"}); err != nil {
		t.Fatal(err)
	}
	r.mgr.Idle(t.Context(), conv)
	if n := len(r.rec.Texts()); n != 4 {
		t.Fatalf("a repeated run was handled again: %q", r.rec.Texts())
	}
}

func TestListRemovePauseResume(t *testing.T) {
	loc := berlin(t)
	t0 := time.Date(2026, 11, 22, 15, 30, 0, 0, loc)
	clk := testkit.NewClock(t0)
	r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)
	r.apply(t, "/remind tomorrow 9am standup")
	r.apply(t, `/schedule "0 * * * *" remind hourly`)
	r.apply(t, `/schedule "0 9 * * 1-5" summarize open PRs`)

	list := r.apply(t, "/cron list")
	for _, want := range []string{
		"(3 of 20, times in Europe/Berlin)",
		"#1 · next Mon 23 Nov 09:00 CET · once remind: standup",
		`#2 · next Sun 22 Nov 16:00 CET · "0 * * * *" remind: hourly`,
		`#3 · next Mon 23 Nov 09:00 CET · "0 9 * * 1-5" run: summarize open PRs`,
	} {
		if !strings.Contains(list, want) {
			t.Fatalf("list %q lacks %q", list, want)
		}
	}
	for _, tc := range []struct{ cmd, reply string }{
		{"/cron pause 2", `Paused #2 ("0 * * * *" remind: hourly).`},
		{"/cron pause 2", "#2 is paused already."},
		{"/cron remove 3", `Removed #3 ("0 9 * * 1-5" run: summarize open PRs).`},
		{"/cron remove 3", "You have no reminder or schedule #3. /cron list shows yours."},
		{"/cron resume 1", "#1 is active already."},
		{"/cron pause 99", "You have no reminder or schedule #99. /cron list shows yours."},
	} {
		if got := r.apply(t, tc.cmd); got != tc.reply {
			t.Fatalf("%s → %q; want %q", tc.cmd, got, tc.reply)
		}
	}
	if list := r.apply(t, "/cron list"); !strings.Contains(list, `#2 · paused · "0 * * * *" remind: hourly`) || strings.Contains(list, "#3") {
		t.Fatalf("list after changes = %q", list)
	}
	// Paused through 16:00 and 17:00: nothing fires.
	advanceTo(t, clk, time.Date(2026, 11, 22, 17, 30, 0, 0, loc))
	if got := r.out.fired(); len(got) != 0 {
		t.Fatalf("paused or removed schedules fired: %q", texts(got))
	}
	if got := r.apply(t, "/cron resume 2"); got != `Resumed #2 ("0 * * * *" remind: hourly); next run Sun 22 Nov 18:00 CET.` {
		t.Fatalf("resume → %q", got)
	}
	advanceTo(t, clk, time.Date(2026, 11, 22, 18, 30, 0, 0, loc))
	if got := r.out.fired(); len(got) != 1 || got[0].at.Format("15:04") != "18:00" {
		t.Fatalf("after resume: %+v", got)
	}
	// Another user's ids are not yours.
	if _, err := r.sched.Remove(t.Context(), "200", 1); err == nil {
		t.Fatal("another user removed #1")
	}
}

// TestLimit: the 21st active job is refused and nothing is stored; a
// removed one makes room again.
func TestLimit(t *testing.T) {
	loc := berlin(t)
	clk := testkit.NewClock(time.Date(2026, 11, 22, 15, 30, 0, 0, loc))
	r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)
	for i := range 20 {
		if reply := r.apply(t, fmt.Sprintf("/remind in %dm item %d", i+1, i)); !strings.Contains(reply, fmt.Sprintf("#%d", i+1)) {
			t.Fatalf("reminder %d: %q", i, reply)
		}
	}
	reply := r.apply(t, `/schedule "0 9 * * *" remind one too many`)
	if !strings.Contains(reply, "You already have 20 reminders and schedules") {
		t.Fatalf("21st → %q", reply)
	}
	if es, _ := r.sched.List(t.Context(), owner); len(es) != 20 {
		t.Fatalf("%d jobs stored; want 20", len(es))
	}
	r.apply(t, "/cron remove 5")
	if reply := r.apply(t, `/schedule "0 9 * * *" remind fits now`); !strings.Contains(reply, "#21") {
		t.Fatalf("after a removal → %q", reply)
	}
}

func TestAddRefusesBadJobs(t *testing.T) {
	loc := berlin(t)
	clk := testkit.NewClock(time.Date(2026, 11, 22, 15, 30, 0, 0, loc))
	r := start(t, filepath.Join(t.TempDir(), "fetch.db"), clk, loc)
	for _, j := range []instincts.Job{
		{Kind: instincts.Reminder, At: clk.Now().Add(time.Hour)},
		{Kind: instincts.Reminder, Text: "x"},
		{Kind: "frob", Text: "x", At: clk.Now().Add(time.Hour)},
		{Kind: instincts.Run, Text: "x", Spec: "61 * * * *"},
		{Kind: instincts.Run, Text: "x", Spec: "0 0 30 2 *"},
	} {
		if _, err := r.sched.Add(t.Context(), conv, owner, j); err == nil {
			t.Errorf("%+v accepted", j)
		}
	}
	if es, _ := r.sched.List(t.Context(), owner); len(es) != 0 {
		t.Fatalf("bad jobs stored: %+v", es)
	}
}
