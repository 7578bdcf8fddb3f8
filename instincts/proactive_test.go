package instincts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
)

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestRemind(t *testing.T) {
	loc := berlin(t)
	set := instincts.New()
	st := idle()
	st.Location = loc
	// now is 2026-11-22 14:30 UTC = 15:30 in Berlin (CET).
	for _, tc := range []struct {
		text string
		at   time.Time
		body string
	}{
		{"/remind in 20m check the deploy", now.Add(20 * time.Minute), "check the deploy"},
		{"/remind in 1h30m stretch", now.Add(90 * time.Minute), "stretch"},
		{"/remind in 2 hours and 5 minutes tea", now.Add(2*time.Hour + 5*time.Minute), "tea"},
		{"/remind at 18:30 call Bob", time.Date(2026, 11, 22, 18, 30, 0, 0, loc), "call Bob"},
		{"/remind at 6pm call Bob", time.Date(2026, 11, 22, 18, 0, 0, 0, loc), "call Bob"},
		{"/remind at 9:15 pm walk", time.Date(2026, 11, 22, 21, 15, 0, 0, loc), "walk"},
		{"/remind tomorrow 9am standup", time.Date(2026, 11, 23, 9, 0, 0, 0, loc), "standup"},
		{"/remind tomorrow at 12am midnight snack", time.Date(2026, 11, 23, 0, 0, 0, 0, loc), "midnight snack"},
		{"/remind today 17:00 leave", time.Date(2026, 11, 22, 17, 0, 0, 0, loc), "leave"},
		{"/remind on 2026-12-24 at 10:00 wrap presents", time.Date(2026, 12, 24, 10, 0, 0, 0, loc), "wrap presents"},
		{"/REMIND In 5 Minutes x", now.Add(5 * time.Minute), "x"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r, ok := set.Match(tc.text, st)
			if !ok || r.Effect != instincts.Remind {
				t.Fatalf("%q → %+v", tc.text, r)
			}
			if !r.Job.At.Equal(tc.at) || r.Job.Text != tc.body || r.Job.Kind != instincts.Reminder || !r.Job.Next.Equal(tc.at) {
				t.Fatalf("job = %+v; want at %s text %q", r.Job, tc.at, tc.body)
			}
			if want := tc.at.In(loc).Format("Mon 2 Jan 15:04 MST"); !strings.Contains(r.Reply, want) {
				t.Fatalf("confirmation %q does not name the due time %s", r.Reply, want)
			}
		})
	}
}

// TestRemindAcrossDST: "tomorrow 9am" on the day clocks change is 9:00 on
// the wall clock, 23 hours ahead.
func TestRemindAcrossDST(t *testing.T) {
	loc := berlin(t)
	st := idle()
	st.Location = loc
	st.Now = time.Date(2026, 3, 28, 9, 0, 0, 0, loc) // Saturday; Sunday 2:00 → 3:00
	r, _ := instincts.New().Match("/remind tomorrow 9am standup", st)
	want := time.Date(2026, 3, 29, 9, 0, 0, 0, loc)
	if !r.Job.At.Equal(want) || r.Job.At.Sub(st.Now) != 23*time.Hour {
		t.Fatalf("at = %s (%s ahead); want %s, 23h ahead", r.Job.At, r.Job.At.Sub(st.Now), want)
	}
}

func TestSchedule(t *testing.T) {
	loc := berlin(t)
	set := instincts.New()
	st := idle()
	st.Location = loc
	for _, tc := range []struct {
		text, spec, body string
		kind             instincts.JobKind
		next             time.Time
		says             string
	}{
		{`/schedule "0 9 * * 1-5" summarize open PRs`, "0 9 * * 1-5", "summarize open PRs", instincts.Run, time.Date(2026, 11, 23, 9, 0, 0, 0, loc), "as if you wrote it"},
		{`/schedule '30 17 * * 5' remind write the weekly report`, "30 17 * * 5", "write the weekly report", instincts.Reminder, time.Date(2026, 11, 27, 17, 30, 0, 0, loc), "reminds you: write the weekly report"},
		{`/schedule "*/15 * * * *" remind me: drink water`, "*/15 * * * *", "drink water", instincts.Reminder, time.Date(2026, 11, 22, 15, 45, 0, 0, loc), "reminds you"},
		{`/schedule @daily check the nightly build`, "@daily", "check the nightly build", instincts.Run, time.Date(2026, 11, 23, 0, 0, 0, 0, loc), "as if you wrote it"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r, ok := set.Match(tc.text, st)
			if !ok || r.Effect != instincts.Schedule {
				t.Fatalf("%q → %+v", tc.text, r)
			}
			if r.Job.Spec != tc.spec || r.Job.Text != tc.body || r.Job.Kind != tc.kind || !r.Job.Next.Equal(tc.next) || !r.Job.At.IsZero() {
				t.Fatalf("job = %+v", r.Job)
			}
			if !strings.Contains(r.Reply, tc.says) || !strings.Contains(r.Reply, tc.next.Format("Mon 2 Jan 15:04 MST")) {
				t.Fatalf("confirmation %q", r.Reply)
			}
		})
	}
}

func TestCronAndWatch(t *testing.T) {
	set := instincts.New()
	st := idle()
	st.Workspace = "api"
	for _, tc := range []struct {
		text   string
		effect instincts.Effect
		id     int64
		ws     string
	}{
		{"/cron list", instincts.CronList, 0, ""},
		{"/cron remove 3", instincts.CronRemove, 3, ""},
		{"/cron rm #3", instincts.CronRemove, 3, ""},
		{"/cron pause 12", instincts.CronPause, 12, ""},
		{"/cron resume 12", instincts.CronResume, 12, ""},
		{"/watch on", instincts.WatchOn, 0, "api"},
		{"/watch off web-2", instincts.WatchOff, 0, "web-2"},
	} {
		r, ok := set.Match(tc.text, st)
		if !ok || r.Effect != tc.effect || r.JobID != tc.id || r.Workspace != tc.ws {
			t.Errorf("%q → %+v", tc.text, r)
		}
	}
}

// TestBadScheduling: what cannot be read gets a usage reply with an
// example and no effect, so nothing is scheduled.
func TestBadScheduling(t *testing.T) {
	set := instincts.New()
	st := idle()
	st.Location = berlin(t)
	for _, tc := range []struct{ text, says string }{
		{"/remind", "Usage: /remind in 20m"},
		{"/remind call Bob", "Usage: /remind in 20m"},
		{"/remind in 20m", "What should I remind you of?"},
		{"/remind in 20m   ", "What should I remind you of?"},
		{"/remind in soon call Bob", "Usage: /remind in 20m"},
		{"/remind at 25:00 call Bob", "could not read that time of day"},
		{"/remind at 9:7 call Bob", "could not read that time of day"},
		{"/remind at 13pm call Bob", "could not read that time of day"},
		{"/remind at 5 people", "could not read that time of day"},
		{"/remind at 10:00 too late", "already passed"},
		{"/remind on 2020-01-01 at 10:00 history", "already passed"},
		{"/remind on 2026-02-30 at 10:00 no such day", "Usage: /remind"},
		{"/remind in 0m now", "already passed"},
		{"/remind in 400 days far", "more than a year"},
		{"/remind in 9999w far", "more than a year"},
		{"/remind in 20m " + strings.Repeat("x", 1001), "keep it under 1000"},
		{"/schedule", "Usage: /schedule"},
		{"/schedule 0 9 * * 1-5 unquoted", "Usage: /schedule"},
		{`/schedule "0 9 * * 1-5`, "Usage: /schedule"},
		{`/schedule "0 9 * *" four fields`, "five fields"},
		{`/schedule "61 9 * * *" bad minute`, "could not read that cron spec"},
		{`/schedule "0 9 * * 1-5"`, "What should the schedule do?"},
		{`/schedule "0 9 * * 1-5" remind`, "What should the schedule do?"},
		{`/schedule "0 0 30 2 *" never`, "never comes due"},
		{`/schedule "TZ=UTC 0 9 * * *" zone`, "time-zone prefixes"},
		{`/schedule "@every 1s" spam`, "@every is not accepted"},
		{"/cron", "Usage: /cron list"},
		{"/cron remove", "Usage: /cron list"},
		{"/cron remove x", "Usage: /cron list"},
		{"/cron remove -1", "Usage: /cron list"},
		{"/cron frob 1", "Usage: /cron list"},
		{"/watch", "Usage: /watch on"},
		{"/watch maybe", "Usage: /watch on"},
		{"/watch on", "No workspace is selected"},
		{"/watch on ../etc", "is not a workspace name"},
		{"/watch on a/b", "is not a workspace name"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r, ok := set.Match(tc.text, st)
			if !ok || r.Effect != instincts.None {
				t.Fatalf("%q → %+v; want a usage reply and no effect", tc.text, r)
			}
			if !strings.Contains(r.Reply, tc.says) {
				t.Fatalf("reply %q does not contain %q", r.Reply, tc.says)
			}
			if (r.Job != instincts.Job{}) {
				t.Fatalf("job %+v on a refusal", r.Job)
			}
		})
	}
}

func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{
		"in 20m check the deploy", "at 18:30 call Bob", "tomorrow 9am standup", "today at 5:45 pm x",
		"on 2026-12-24 at 10:00 wrap", "in 1 hour and 30 minutes y", "in 9999w", "at 0:00", "at 12am",
		"2026-11-23 9:00 z", "in 1h1h1h1h", "at :30", "at 9:", "in and", "tomorrow", "on", "at 99999999999999999999pm",
	} {
		f.Add(s)
	}
	loc := berlin(f)
	f.Fuzz(func(t *testing.T, s string) {
		at, rest, err := instincts.ParseWhen(s, now, loc)
		if err != nil {
			if !at.IsZero() || rest != "" {
				t.Fatalf("error %v with at %s rest %q", err, at, rest)
			}
			return
		}
		if !at.After(now) || at.Sub(now) > 366*24*time.Hour {
			t.Fatalf("%q → %s: not in (now, now+1y]", s, at)
		}
		if rest != "" && !strings.HasSuffix(strings.Join(strings.Fields(s), " "), rest) {
			t.Fatalf("%q → rest %q is not the end of the input", s, rest)
		}
	})
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"0 9 * * 1-5", "*/15 * * * *", "30 17 * * 5", "@daily", "@weekly", "0 0 30 2 *", "0 0 1 1 *",
		"5-4 * * * *", "0 9 * * MON-FRI", "0 0 L * *", "? ? ? ? ?", "0-59/0 * * * *", "TZ=UTC 0 0 * * *", "@every 1s",
		"0 0 * * 7", "1,2,3 4-5 6/2 JAN-DEC SUN",
	} {
		f.Add(s)
	}
	loc := berlin(f)
	f.Fuzz(func(t *testing.T, spec string) {
		sched, err := instincts.ParseSpec(spec)
		if err != nil {
			return
		}
		next := instincts.NextRun(sched, now, loc)
		if next.IsZero() {
			return
		}
		if !next.After(now) || next.Second() != 0 || next.Nanosecond() != 0 {
			t.Fatalf("%q: next run %s after %s", spec, next, now)
		}
		if after := instincts.NextRun(sched, next, loc); !after.IsZero() && !after.After(next) {
			t.Fatalf("%q: next after %s is %s", spec, next, after)
		}
	})
}
