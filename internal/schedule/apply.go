package schedule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
)

// timeLayout is how times are shown to the owner.
const timeLayout = "Mon 2 Jan 15:04 MST"

// Apply carries out a scheduling instinct (/remind, /schedule, /cron …)
// for a user's conversation in a transaction of its own and returns the
// reply. Refusals the user can act on (the limit, an unknown id) are
// replies; the error is for failures of Fetch's own.
func (s *Scheduler) Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error) {
	var reply string
	var after func()
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		reply, after, err = s.ApplyTx(ctx, tx, conversationID, userID, r)
		return err
	})
	if err != nil {
		return "", err
	}
	after()
	return reply, nil
}

// ApplyTx is Apply inside the caller's transaction — the one that marks
// the command's message handled (store.DB.CompleteWith), so that the job
// is stored, removed or paused exactly when the message counts as
// handled. after is to be called once tx committed (never after a
// rollback): it wakes the runner, which must not look for the new job
// before it is visible. after never blocks and is never nil. A refusal
// (the limit, an unknown id) is a reply and writes nothing.
func (s *Scheduler) ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error) {
	switch r.Effect {
	case instincts.Remind, instincts.Schedule:
		e, err := s.add(ctx, tx, conversationID, userID, r.Job)
		if errors.Is(err, ErrLimit) {
			return fmt.Sprintf("You already have %d reminders and schedules, the most I keep. Remove one first: /cron list, then /cron remove ID.", s.max), nothing, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("schedule: add: %w", err)
		}
		return fmt.Sprintf("%s [#%d — /cron remove %d cancels it]", r.Reply, e.ID, e.ID), s.poke, nil
	case instincts.CronList:
		es, err := queryTx(ctx, tx, "user_id = ? AND state IN ('active', 'paused') ORDER BY id", userID)
		if err != nil {
			return "", nil, fmt.Errorf("schedule: list: %w", err)
		}
		return s.format(es), nothing, nil
	case instincts.CronRemove, instincts.CronPause, instincts.CronResume:
		from, to, op, verb := []State{Active, Paused}, Removed, "remove", "Removed"
		switch r.Effect {
		case instincts.CronPause:
			from, to, op, verb = []State{Active}, Paused, "pause", "Paused"
		case instincts.CronResume:
			from, to, op, verb = []State{Paused}, Active, "resume", "Resumed"
		}
		e, err := s.changeTx(ctx, tx, userID, r.JobID, from, to)
		switch {
		case errors.Is(err, ErrNotFound):
			return fmt.Sprintf("You have no reminder or schedule #%d. /cron list shows yours.", r.JobID), nothing, nil
		case errors.Is(err, ErrState):
			return fmt.Sprintf("#%d is %s already.", r.JobID, e.State), nothing, nil
		case err != nil:
			return "", nil, fmt.Errorf("schedule: %s %d: %w", op, r.JobID, err)
		}
		after := nothing
		if to == Active {
			after = s.poke
		}
		reply := fmt.Sprintf("%s #%d (%s).", verb, e.ID, s.describe(e))
		if e.State == Active && !e.Next.IsZero() {
			reply = fmt.Sprintf("%s #%d (%s); next run %s.", verb, e.ID, s.describe(e), e.Next.In(s.loc).Format(timeLayout))
		}
		return reply, after, nil
	}
	return "", nil, fmt.Errorf("schedule: apply: effect %q is not a scheduling effect", r.Effect)
}

// nothing is the after of a change that needs nothing done after it.
func nothing() {}

// describe is a job in a few words: `once: call Bob`, `"0 9 * * 1-5" run:
// summarize open PRs`.
func (s *Scheduler) describe(e Entry) string {
	what := "remind"
	if e.Kind == instincts.Run {
		what = "run"
	}
	when := "once"
	if e.Spec != "" {
		when = fmt.Sprintf("%q", e.Spec)
	}
	return fmt.Sprintf("%s %s: %s", when, what, truncate(e.Text, 80))
}

func (s *Scheduler) format(es []Entry) string {
	if len(es) == 0 {
		return "You have no reminders or schedules. /remind in 20m check the deploy sets one."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your reminders and schedules (%d of %d, times in %s):", len(es), s.max, zoneName(s.loc, s.clock.Now()))
	for _, e := range es {
		next := "paused"
		if e.State == Active {
			next = "next " + e.Next.In(s.loc).Format(timeLayout)
		}
		fmt.Fprintf(&b, "\n#%d · %s · %s", e.ID, next, s.describe(e))
	}
	return b.String()
}

func truncate(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// zoneName names loc for the owner: its IANA name, or for the process's
// own zone ("Local") the abbreviation in force at now, e.g. "CET".
func zoneName(loc *time.Location, now time.Time) string {
	if name := loc.String(); name != "Local" {
		return name
	}
	abbr, _ := now.In(loc).Zone()
	return abbr
}
