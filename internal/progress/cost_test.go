package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
)

func TestCost(t *testing.T) {
	for _, c := range []struct {
		t    task.Task
		want string
	}{
		{task.Task{}, ""},
		{task.Task{CostUSD: 0.0375, CLICostUSD: 0.0375}, "$0.0375"},
		{task.Task{CostUSD: 0.05, CLICostUSD: 0.04}, "$0.0500 (coding CLI $0.0400, Fetch's own LLM calls $0.0100)"},
		{task.Task{CostUnknown: true}, "unknown: the coding CLI reported tokens of a model whose price Fetch does not know"},
		{task.Task{CostUSD: 0.05, CLICostUSD: 0.05, CostPricedAs: "claude-opus-4-8"}, "$0.0500 (estimated: Fetch does not know the price of the CLI's model; it priced its tokens as claude-opus-4-8, to err high)"},
	} {
		if got := Cost(c.t); got != c.want {
			t.Errorf("Cost(%+v) = %q, want %q", c.t, got, c.want)
		}
	}
	r := Result(task.Task{ID: "t1", Workspace: "app", State: task.Failed, Goal: "g", CostUSD: 0.06, CLICostUSD: 0.06, Error: "stopped at the task budget of $0.05"})
	if !strings.Contains(r.Text, "\nCost: $0.0600") {
		t.Errorf("result %q has no cost line", r.Text)
	}
}

// TestLimits: /status shows each CLI's windows as it last told them,
// flags one near its limit, and leaves out a window whose reset passed.
func TestLimits(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	told := now.Add(-10 * time.Minute)
	got := Limits([]store.CLILimit{
		{Harness: "claude", Name: "five_hour", UsedPercent: 93, Status: "allowed_warning", ResetsAt: now.Add(3 * time.Hour), UpdatedAt: told},
		{Harness: "claude", Name: "seven_day", UsedPercent: 10, UpdatedAt: told},
		{Harness: "codex", Name: "5h", UsedPercent: 99, ResetsAt: now.Add(-time.Minute), UpdatedAt: told},
	}, now)
	want := "claude ⚠️ five_hour 93% used, resets Nov 28 15:00 UTC; seven_day 10% used (told Nov 28 11:50 UTC)"
	if got != want {
		t.Errorf("Limits = %q\nwant      %q", got, want)
	}
	if got := Limits(nil, now); got != "" {
		t.Errorf("no windows: %q", got)
	}
}
