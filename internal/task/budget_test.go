package task_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
)

// TestStoppedAtTaskBudget: a CLI that reports growing cost while it runs
// (Claude's assistant messages, priced by model) is stopped once the task
// passes its budget; the task fails with a message naming the cap and how
// to raise it, its recorded cost is at least the cap, and nothing of the
// run is left in the kennel.
func TestStoppedAtTaskBudget(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{taskBudget: 0.05})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "burn tokens [scenario:spend:60]"})
	if err != nil {
		t.Fatal(err)
	}
	e.obs.waitFor(t, created.ID, progressWith(harness.KindSpend))
	got := wait(t, e, created.ID)
	if got.State != task.Failed {
		t.Fatalf("state %s, want failed: %+v", got.State, got)
	}
	for _, want := range []string{"stopped at the task budget of $0.05", "FETCH_TASK_BUDGET_USD", "set it to 0 for no cap"} {
		if !strings.Contains(got.Error, want) {
			t.Errorf("error %q does not say %q", got.Error, want)
		}
	}
	if got.CostUSD < 0.05 || got.CLICostUSD != got.CostUSD {
		t.Errorf("cost %v (CLI %v), want at least the cap, all of it the CLI's", got.CostUSD, got.CLICostUSD)
	}
	// Stopped well before the scenario's 60 s of calls ($3.75) ran out.
	if got.CostUSD > 0.5 {
		t.Errorf("cost %v: the run was not stopped near its cap", got.CostUSD)
	}
	assertGone(t, k, wsPath, got.RunID)
}

// TestNoBudgetNoStop: without a budget the same kind of run goes to its
// end, and its cost is the CLI's final figure.
func TestNoBudgetNoStop(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "burn a little [scenario:spend:1]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Succeeded || got.CostUSD <= 0 || got.CostUnknown {
		t.Fatalf("task %s, cost %v (unknown %v): %s", got.State, got.CostUSD, got.CostUnknown, got.Error)
	}
}
