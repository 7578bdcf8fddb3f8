package progress_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

// TestRedactsBeforeClipping: a secret that straddles the cut is masked
// whole, not cut first (which would show its first characters and hide it
// from the redactor).
func TestRedactsBeforeClipping(t *testing.T) {
	const secret = "sk-or-v1-straddling0123456789"
	scrub := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	pad := strings.Repeat("x", 92) + " "
	for _, ev := range []harness.Event{
		{Kind: harness.KindText, Text: pad + secret},
		{Kind: harness.KindError, Text: pad + secret},
		{Kind: harness.KindCommand, Command: strings.Repeat("y", 75) + " " + secret},
	} {
		t.Run(string(ev.Kind), func(t *testing.T) {
			line := progress.Step(ev, scrub)
			if strings.Contains(line, secret[:4]) {
				t.Errorf("Step shows the start of the secret: %q", line)
			}
		})
	}
	tr := progress.NewTracker(0, scrub)
	long := task.Task{ID: "t1", State: task.Failed, Goal: strings.Repeat("g", 195) + secret, Summary: strings.Repeat("s", 695) + secret,
		Error: strings.Repeat("e", 395) + secret, StderrTail: strings.Repeat("z", 295) + secret}
	for _, r := range tr.Ended(long) {
		if strings.Contains(r.Text, secret[:4]) {
			t.Errorf("Ended shows the start of the secret: %q", r.Text)
		}
	}
}
