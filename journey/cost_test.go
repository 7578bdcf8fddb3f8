package journey

import (
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// J-cost: a coding CLI that reports growing cost while it runs is stopped
// at FETCH_TASK_BUDGET_USD: the owner reads that the task stopped at the
// task budget, naming the setting and how to raise it, with its cost; the
// CLI is gone from the kennel; the task's recorded cost is at least the
// cap. The day is then over FETCH_DAILY_BUDGET_USD: the next task the
// model starts waits for the owner's approval (buttons), nothing runs
// before it, and `fetch task run` refuses with exit code 2 unless
// --over-budget.
func TestJourneyCostCap(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_TASK_BUDGET_USD"] = "0.05"
	w.env["FETCH_DAILY_BUDGET_USD"] = "0.05"
	w.start()

	// $0.0125 a model call, one every 200 ms, for up to a minute ($3.75).
	m, status := w.startTask(ownerID, "refactor the app workspace", "refactor everything [scenario:spend:60]", "app")
	id := taskID(t, status.Text)
	// A two-way run of a chat's task is paused at the cap and the owner
	// asked; Stop ends it as a budget stop.
	paused := w.awaitNew(m, regexp.MustCompile(`💰 Task `+id+`: I paused at the task budget`), "the pause at the cap")
	w.d.Click(ownerID, paused.Msg.ID, w.button(paused, "Stop"))
	res := w.awaitResult(m, regexp.MustCompile(`❌ Task `+id+` failed on app`), "the stopped task's result")
	for _, want := range []string{"stopped at the task budget of $0.05 (FETCH_TASK_BUDGET_USD)", "Raise FETCH_TASK_BUDGET_USD, or set it to 0 for no cap"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the result %q does not say %q", res.Text, want)
		}
	}
	// The CLI goes on spending until the stop reaches it (a model call
	// every 200 ms): near the cap, not at it.
	if cost, ok := dollars(res.Text, "\nCost: "); !ok || cost < 0.05 || cost > 0.5 {
		t.Errorf("the result %q does not give a cost of at least the $0.05 cap (and near it)", res.Text)
	}
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) == 0 }); !ok {
		t.Errorf("CLI processes left in the kennel after the task was stopped at its budget: %q", ps)
	}
	show := exec.Command(fetchBinary(t), "task", "show", "--json", id)
	show.Env = w.environ()
	out, err := show.Output()
	if err != nil {
		t.Fatalf("fetch task show %s: %v\n%s", id, err, out)
	}
	var shown struct {
		State   string  `json:"state"`
		CostUSD float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal(out, &shown); err != nil {
		t.Fatalf("fetch task show --json: %v\n%s", err, out)
	}
	t.Logf("the owner read:\n%s\nrecorded cost $%.4f", res.Text, shown.CostUSD)
	if shown.State != "failed" || shown.CostUSD < 0.05 || shown.CostUSD > 0.5 {
		t.Errorf("recorded task: state %s, cost $%v; want failed at a cost of at least the $0.05 cap (and stopped near it)", shown.State, shown.CostUSD)
	}

	// Over the day's budget: the next task is asked about first.
	w.llm.Script(taskCreate("call-again", "try again [scenario:spend:60]", "app"), testkit.Say("Started it."))
	m = w.send(ownerID, "try the refactor again")
	ask, _ := w.approval(m, regexp.MustCompile(`(?s)approval.*over the daily budget of \$0\.05.*task_create`), "Approve")
	if spent, ok := dollars(ask.Text, `today's spend `); !ok || spent < shown.CostUSD {
		t.Errorf("the approval %q does not say what today's spend is (at least the stopped task's $%.4f)", ask.Text, shown.CostUSD)
	}
	if _, ok := w.find(m, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), func(seen) bool { return true }); ok {
		t.Errorf("a task started before the owner approved going over the daily budget")
	}
	if ps := w.cliProcesses(); len(ps) != 0 {
		t.Errorf("a CLI runs in the kennel before the owner approved: %q", ps)
	}

	t.Logf("the owner was asked:\n%s", ask.Text)
	m = w.send(ownerID, "/status")
	w.await(m, regexp.MustCompile(`Spent today \(coding CLIs and Fetch's own calls\): \$\d+\.\d{4}, over the daily budget of \$0\.05`), "/status showing the day's spend over its budget")
	run := exec.Command(fetchBinary(t), "task", "run", "--workspace", "app", "one more [scenario:spend:1]")
	run.Env = w.environ()
	out, err = run.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("fetch task run over the daily budget: %v, want exit code 2\n%s", err, out)
	}
	for _, want := range []string{"over the daily budget of $0.05 (FETCH_DAILY_BUDGET_USD)", "--over-budget"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("fetch task run said %q; want it to mention %q", out, want)
		}
	}
}

// dollars reads the amount in text after prefix ("$0.1234").
func dollars(text, prefix string) (float64, bool) {
	m := regexp.MustCompile(regexp.QuoteMeta(prefix) + `\$(\d+\.\d+)`).FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}
