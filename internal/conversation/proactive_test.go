package conversation_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/schedule"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestRemindThroughTheConversation: /remind, /cron list and a bad time go
// through the instincts to the real scheduler, and the reminder comes back
// through the outbox when the clock reaches it.
func TestRemindThroughTheConversation(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	clk := testkit.NewClock(time.Date(2026, 11, 22, 15, 30, 0, 0, loc))
	path := filepath.Join(t.TempDir(), "fetch.db")
	db := openDB(t, path)
	sched := schedule.New(schedule.Config{Store: db, Location: loc, Clock: clk, Logger: quiet()})
	e := newEnvOn(t, db, conversation.Config{Scheduler: sched, Location: loc, Now: clk.Now})
	if err := sched.Open(t.Context(), e.mgr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sched.Close(context.Background()) })

	e.say(t, "/remind at 25:00 call Bob")
	e.say(t, "/remind in 20m check the deploy")
	e.say(t, "/cron list")
	got := e.rec.WaitFor(t, 3)
	if !strings.Contains(got[0].Reply.Text, "could not read that time of day") {
		t.Fatalf("bad time → %q", got[0].Reply.Text)
	}
	if !strings.Contains(got[1].Reply.Text, "Sun 22 Nov 15:50 CET") || !strings.Contains(got[1].Reply.Text, "#1") {
		t.Fatalf("confirmation = %q", got[1].Reply.Text)
	}
	if !strings.Contains(got[2].Reply.Text, "#1 · next Sun 22 Nov 15:50 CET · once remind: check the deploy") || strings.Contains(got[2].Reply.Text, "Bob") {
		t.Fatalf("list = %q", got[2].Reply.Text)
	}
	for clk.Now().Before(time.Date(2026, 11, 22, 16, 0, 0, 0, loc)) {
		clk.Set(clk.NextTimer(t))
	}
	if got := e.rec.WaitFor(t, 4); got[3].Reply.Text != "⏰ Reminder: check the deploy" {
		t.Fatalf("reminder = %q", got[3].Reply.Text)
	}
}

func TestSchedulingWithoutScheduler(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	e.say(t, "/remind in 20m x")
	if got := e.rec.WaitFor(t, 1); got[0].Reply.Text != "That is not available in this Fetch." {
		t.Fatalf("reply = %q", got[0].Reply.Text)
	}
}

// Without a Shipping or an Allowlist (nil in Config), /ship and /allow say
// so instead of calling a nil applier.
func TestShipAndAllowWithoutThem(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	for i, cmd := range []string{"/ship app local", "/allow list"} {
		e.say(t, cmd)
		if got := e.rec.WaitFor(t, i+1); got[i].Reply.Text != "That is not available in this Fetch." {
			t.Fatalf("%s: reply = %q", cmd, got[i].Reply.Text)
		}
	}
}

// TestStopWakesResting: a stop, which overtakes the mailbox, is a message
// too and wakes a resting conversation.
func TestStopWakesResting(t *testing.T) {
	e := newEnv(t, conversation.Config{IdleAfter: 50 * time.Millisecond})
	e.say(t, "/whoami")
	waitMode(t, e.db, "RESTING")
	e.say(t, "stop")
	waitMode(t, e.db, "ALERT")
}
