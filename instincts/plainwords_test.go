package instincts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
)

// TestPlainWords: reminders and schedules in plain words make the job the
// slash commands make; look-alikes are left to the conversation, and a
// reminder whose time cannot be read gets a reply saying how to say it.
// now is Sunday 2026-11-22 15:30 in Berlin.
func TestPlainWords(t *testing.T) {
	set, st, loc := instincts.New(), idle(), berlin(t)
	st.Location = loc
	for _, tc := range []struct {
		text  string
		job   instincts.Job // zero: no job
		reply string        // a part of the reply
		none  bool          // not an instinct's
	}{
		{text: "remind me tomorrow at 9 to check the deploy", job: instincts.Job{Kind: instincts.Reminder, Text: "check the deploy", At: time.Date(2026, 11, 23, 9, 0, 0, 0, loc)}, reply: "Mon 23 Nov 09:00 CET"},
		{text: "remind me in 5 minutes to check tests", job: instincts.Job{Kind: instincts.Reminder, Text: "check tests", At: now.Add(5 * time.Minute)}},
		{text: "Hey Fetch, please remind me in 3s to water the plants.", job: instincts.Job{Kind: instincts.Reminder, Text: "water the plants", At: now.Add(3 * time.Second)}},
		{text: "remind me to call Bob in 20 minutes", job: instincts.Job{Kind: instincts.Reminder, Text: "call Bob", At: now.Add(20 * time.Minute)}},
		{text: "can you remind me to call Bob at 18:30", job: instincts.Job{Kind: instincts.Reminder, Text: "call Bob", At: time.Date(2026, 11, 22, 18, 30, 0, 0, loc)}},
		{text: "remind me on friday at 5pm that the release is due", job: instincts.Job{Kind: instincts.Reminder, Text: "the release is due", At: time.Date(2026, 11, 27, 17, 0, 0, 0, loc)}},
		{text: "remind me sunday at 9 to rest", job: instincts.Job{Kind: instincts.Reminder, Text: "rest", At: time.Date(2026, 11, 29, 9, 0, 0, 0, loc)}},
		{text: "remind me on sunday at 9 to rest", job: instincts.Job{Kind: instincts.Reminder, Text: "rest", At: time.Date(2026, 11, 29, 9, 0, 0, 0, loc)}},
		{text: "remind me next sunday at 18:00 to rest", job: instincts.Job{Kind: instincts.Reminder, Text: "rest", At: time.Date(2026, 11, 29, 18, 0, 0, 0, loc)}},
		{text: "remind me on sunday at 18:00 to rest", job: instincts.Job{Kind: instincts.Reminder, Text: "rest", At: time.Date(2026, 11, 22, 18, 0, 0, 0, loc)}},
		{text: "every monday at 9 summarize open PRs", job: instincts.Job{Kind: instincts.Run, Text: "summarize open PRs", Spec: "0 9 * * 1", Next: time.Date(2026, 11, 23, 9, 0, 0, 0, loc)}, reply: `"0 9 * * 1"`},
		{text: "every weekday at 9:30am run the tests", job: instincts.Job{Kind: instincts.Run, Text: "run the tests", Spec: "30 9 * * 1-5", Next: time.Date(2026, 11, 23, 9, 30, 0, 0, loc)}},
		{text: "every tuesday and thursday at 17:00 remind me to stretch", job: instincts.Job{Kind: instincts.Reminder, Text: "stretch", Spec: "0 17 * * 2,4", Next: time.Date(2026, 11, 24, 17, 0, 0, 0, loc)}},
		{text: "remind me every friday at 17:00 to write the weekly report", job: instincts.Job{Kind: instincts.Reminder, Text: "write the weekly report", Spec: "0 17 * * 5", Next: time.Date(2026, 11, 27, 17, 0, 0, 0, loc)}},
		{text: "every hour check the queue", job: instincts.Job{Kind: instincts.Run, Text: "check the queue", Spec: "0 * * * *", Next: time.Date(2026, 11, 22, 16, 0, 0, 0, loc)}},
		{text: "/remind 5m check tests", job: instincts.Job{Kind: instincts.Reminder, Text: "check tests", At: now.Add(5 * time.Minute)}},
		{text: "remind me to check tests", reply: "When should I remind you? Say it like: remind me in 20 minutes"},
		{text: "remind me today at 9 to x", reply: "already passed"},
		{text: "remind me in 400 days to renew", reply: "more than a year ahead"},
		{text: "every monday summarize open PRs", reply: "At what time?"},
		{text: "every monday at 25 summarize", reply: "could not read that time of day"},
		{text: "remind me how the kennel cleanup works", none: true},
		{text: "every file in src needs a license header", none: true},
		{text: "add a test for every day of the week", none: true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r, ok := set.Match(tc.text, st)
			if tc.none {
				if ok {
					t.Fatalf("%q taken by an instinct: %+v", tc.text, r)
				}
				return
			}
			if !ok || !strings.Contains(r.Reply, tc.reply) {
				t.Fatalf("%q → %v %+v; want a reply with %q", tc.text, ok, r, tc.reply)
			}
			if tc.job == (instincts.Job{}) {
				if r.Effect != instincts.None {
					t.Fatalf("%q → effect %q; want none", tc.text, r.Effect)
				}
				return
			}
			want := tc.job
			if want.Next.IsZero() {
				want.Next = want.At
			}
			effect := instincts.Remind
			if want.Spec != "" {
				effect = instincts.Schedule
			}
			if r.Effect != effect || r.Job.Kind != want.Kind || r.Job.Text != want.Text || r.Job.Spec != want.Spec || !r.Job.At.Equal(want.At) || !r.Job.Next.Equal(want.Next) {
				t.Fatalf("%q → %s %+v; want %s %+v", tc.text, r.Effect, r.Job, effect, want)
			}
		})
	}
}
