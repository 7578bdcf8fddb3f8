package schedule

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// run is the runner goroutine: fire what is due, sleep until the next run
// or a wake, repeat until ctx ends.
func (s *Scheduler) run(ctx context.Context, d Deliverer) {
	for {
		next, err := s.fireDue(ctx, d)
		if err != nil && ctx.Err() == nil {
			s.log.Error("schedule: fire due jobs", "err", err)
		}
		sleep := maxSleep
		if !next.IsZero() {
			sleep = min(max(next.Sub(s.clock.Now()), 0), maxSleep)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-s.clock.After(sleep):
		}
	}
}

// fireDue fires every active job whose next run is not after now, and
// returns the earliest next run left (zero when none).
func (s *Scheduler) fireDue(ctx context.Context, d Deliverer) (time.Time, error) {
	now := s.clock.Now()
	due, err := s.query(ctx, "state = 'active' AND next_run IS NOT NULL AND next_run <= ? ORDER BY next_run, id", store.FormatTime(now))
	if err != nil {
		return time.Time{}, err
	}
	for _, e := range due {
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		s.fire(ctx, d, e, now)
	}
	var next sql.NullString
	if err := s.db.SQL().QueryRowContext(ctx, "SELECT MIN(next_run) FROM schedules WHERE state = 'active'").Scan(&next); err != nil {
		return time.Time{}, err
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return store.ParseTime(next.String)
}

// fire runs one due job and moves it on.
func (s *Scheduler) fire(ctx context.Context, d Deliverer, e Entry, now time.Time) {
	log := s.log.With("schedule", e.ID, "due", e.Next)
	late := now.Sub(e.Next) > lateAfter
	if e.Spec == "" {
		// One-shot: fires once, late or not. It is handed over before
		// it is claimed; the conversation drops a repeat (same key), so a
		// crash in between repeats nothing and loses nothing.
		s.deliver(ctx, d, e, late)
		s.claim(ctx, e, time.Time{}, Done)
		return
	}
	sched, err := instincts.ParseSpec(e.Spec)
	if err != nil {
		log.Error("stored cron spec no longer parses; schedule stopped", "spec", e.Spec, "err", err)
		s.claim(ctx, e, time.Time{}, Done)
		return
	}
	next := instincts.NextRun(sched, now, s.loc)
	if late {
		missed := 0
		for t := e.Next; !t.IsZero() && !t.After(now) && missed < maxMissedCount; t = instincts.NextRun(sched, t, s.loc) {
			missed++
		}
		log.Warn("missed runs skipped", "missed", missed, "spec", e.Spec, "next", next)
		state := Active
		if next.IsZero() {
			state = Done
		}
		if s.claim(ctx, e, next, state) {
			s.audit(ctx, e, "schedule_missed", fmt.Sprintf("#%d %q: %d missed runs since %s skipped", e.ID, e.Spec, missed, e.Next.In(s.loc).Format(timeLayout)))
		}
		return
	}
	state := Active
	if next.IsZero() {
		state = Done
	}
	// The conversation drops a run or reminder handed over twice (same
	// key), so hand it over before claiming: a crash in between repeats
	// nothing and loses nothing.
	s.deliver(ctx, d, e, false)
	s.claim(ctx, e, next, state)
}

// claim moves a job's next run on, only if nobody did since it was read
// (another process sharing the database). It tells whether it did.
func (s *Scheduler) claim(ctx context.Context, e Entry, next time.Time, state State) bool {
	now := store.FormatTime(s.clock.Now())
	res, err := s.db.SQL().ExecContext(ctx,
		"UPDATE schedules SET next_run = ?, last_run = ?, state = ?, updated_at = ? WHERE id = ? AND state = 'active' AND next_run = ?",
		nullTime(next), store.FormatTime(e.Next), string(state), now, e.ID, store.FormatTime(e.Next))
	if err != nil {
		s.log.Error("schedule: claim run", "schedule", e.ID, "err", err)
		return false
	}
	n, _ := res.RowsAffected()
	return n == 1
}

// deliver sends a reminder or hands a run to the conversation.
func (s *Scheduler) deliver(ctx context.Context, d Deliverer, e Entry, late bool) {
	if s.metrics != nil {
		s.metrics.Fired(string(e.Kind), s.clock.Now().Sub(e.Next))
	}
	log := s.log.With("schedule", e.ID, "conversation", e.ConversationID)
	due := e.Next.In(s.loc).Format(timeLayout)
	if e.Kind == instincts.Reminder {
		text := "⏰ Reminder: " + e.Text
		switch {
		case late:
			text = fmt.Sprintf("⏰ Reminder (due %s; Fetch was not running then): %s", due, e.Text)
		case e.Spec != "":
			text = fmt.Sprintf("⏰ %s (schedule #%d)", e.Text, e.ID)
		}
		if err := d.NotifyOnce(ctx, e.ConversationID, fmt.Sprintf("remind:%d:%d", e.ID, e.Next.Unix()), chat.Text(text)); err != nil {
			log.Error("schedule: send reminder", "err", err)
		}
		return
	}
	conv, err := s.db.Conversation(ctx, e.ConversationID)
	if err != nil {
		log.Error("schedule: run", "err", err)
		return
	}
	if err := d.NotifyOnce(ctx, e.ConversationID, fmt.Sprintf("sched:%d:%d", e.ID, e.Next.Unix()), chat.Text(fmt.Sprintf("🔁 Schedule #%d (%s): %s", e.ID, due, e.Text))); err != nil {
		log.Error("schedule: announce run", "err", err)
	}
	err = d.Receive(ctx, chat.Message{
		Channel:        conv.Channel,
		ConversationID: e.ConversationID,
		ExternalID:     fmt.Sprintf("sched:%d:%d", e.ID, e.Next.Unix()),
		UserID:         e.UserID,
		Text:           e.Text,
		At:             e.Next,
	})
	if err != nil {
		log.Error("schedule: hand over run", "err", err)
	}
}

func (s *Scheduler) audit(ctx context.Context, e Entry, action, detail string) {
	err := s.db.Audit(context.WithoutCancel(ctx), store.AuditEntry{ConversationID: e.ConversationID, Actor: "fetch", Action: action, Detail: detail})
	if err != nil {
		s.log.Error("schedule: audit", "err", err)
	}
}
