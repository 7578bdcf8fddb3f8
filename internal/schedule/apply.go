package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
)

// timeLayout is how times are shown to the owner.
const timeLayout = "Mon 2 Jan 15:04 MST"

// Apply carries out a scheduling instinct (/remind, /schedule, /cron …)
// for a user's conversation and returns the reply. Refusals the user can
// act on (the limit, an unknown id) are replies; the error is for
// failures of Fetch's own.
func (s *Scheduler) Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error) {
	switch r.Effect {
	case instincts.Remind, instincts.Schedule:
		e, err := s.Add(ctx, conversationID, userID, r.Job)
		if errors.Is(err, ErrLimit) {
			return fmt.Sprintf("You already have %d reminders and schedules, the most I keep. Remove one first: /cron list, then /cron remove ID.", s.max), nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s [#%d — /cron remove %d cancels it]", r.Reply, e.ID, e.ID), nil
	case instincts.CronList:
		es, err := s.List(ctx, userID)
		if err != nil {
			return "", err
		}
		return s.format(es), nil
	case instincts.CronRemove, instincts.CronPause, instincts.CronResume:
		op, verb := s.Remove, "Removed"
		switch r.Effect {
		case instincts.CronPause:
			op, verb = s.Pause, "Paused"
		case instincts.CronResume:
			op, verb = s.Resume, "Resumed"
		}
		e, err := op(ctx, userID, r.JobID)
		switch {
		case errors.Is(err, ErrNotFound):
			return fmt.Sprintf("You have no reminder or schedule #%d. /cron list shows yours.", r.JobID), nil
		case errors.Is(err, ErrState):
			return fmt.Sprintf("#%d is %s already.", r.JobID, s.stateOf(ctx, userID, r.JobID)), nil
		case err != nil:
			return "", err
		}
		reply := fmt.Sprintf("%s #%d (%s).", verb, e.ID, s.describe(e))
		if e.State == Active && !e.Next.IsZero() {
			reply = fmt.Sprintf("%s #%d (%s); next run %s.", verb, e.ID, s.describe(e), e.Next.In(s.loc).Format(timeLayout))
		}
		return reply, nil
	}
	return "", fmt.Errorf("schedule: apply: effect %q is not a scheduling effect", r.Effect)
}

func (s *Scheduler) stateOf(ctx context.Context, userID string, id int64) State {
	e, err := s.Get(ctx, userID, id)
	if err != nil {
		return "changed"
	}
	return e.State
}

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
