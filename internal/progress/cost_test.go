package progress

import (
	"strings"
	"testing"

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
