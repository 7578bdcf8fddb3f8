package journey

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// J-cost-estimated: Claude Code reporting claude-sonnet-4-5-20250929 (its
// id for Sonnet 4.5, a model Fetch's price table has no price for) and
// growing usage is still held at FETCH_TASK_BUDGET_USD: its tokens are
// priced as the dearest Anthropic model Fetch knows (claude-opus-4-8,
// $5/$25 per million tokens). A chat's Claude runs two-way, so at the cap
// it is paused, not killed: the owner is asked, in a message that says
// the cost is estimated and over the cap by at most one model call, to
// raise the cap or stop; Stop ends it as a budget stop, whose result says
// the cost is estimated and as which model, and the task's recorded cost
// passes the cap by at most one model call's cost.
func TestJourneyCostCapEstimated(t *testing.T) {
	t.Parallel()
	const (
		budget = 0.04
		// One of the spend scenario's model calls (fakecli: 2000 input
		// and 100 output tokens) at claude-opus-4-8's $5/$25.
		call = (2000*5 + 100*25) / 1e6
	)
	w := newWorld(t, "app")
	w.env["FETCH_TASK_BUDGET_USD"] = "0.04"
	w.start()
	w.ask(ownerID, "/model claude-sonnet-4-5-20250929", regexp.MustCompile(`^Tasks here use the model claude-sonnet-4-5-20250929 from now on`))

	// A model call every 5 s for up to two minutes: the pause reaches the
	// CLI (an exec into the kennel, slow on a loaded machine) between two
	// calls.
	m, status := w.startTask(ownerID, "refactor the app workspace", "refactor everything [scenario:spend:120] [every:5000ms]", "app")
	id := taskID(t, status.Text)
	ask := w.pausedAtBudget(m, id, budget, call)
	stopped := w.mark(ownerID)
	w.d.Click(ownerID, ask.Msg.ID, w.button(ask, "Stop"))
	w.awaitNew(stopped, regexp.MustCompile(`^Task `+id+` stops at its budget`), "the stop's reply")
	res := w.awaitResult(stopped, regexp.MustCompile(`❌ Task `+id+` failed on app`), "the stopped task's result")
	t.Logf("the owner read:\n%s", res.Text)
	for _, want := range []string{
		"\nCost: $0.0", // then the estimate, as below
		"stopped at the task budget of $0.04 (FETCH_TASK_BUDGET_USD)",
		"(estimated: Fetch does not know the price of the CLI's model; it priced its tokens as claude-opus-4-8, to err high)",
		"Raise FETCH_TASK_BUDGET_USD, or set it to 0 for no cap",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the result %q does not say %q", res.Text, want)
		}
	}
	if n := strings.Count(res.Text, "(estimated: "); n != 2 {
		t.Errorf("the result marks %d costs estimated; want its Cost line and the budget stop", n)
	}
	if spent, ok := dollars(res.Text, "it had cost "); !ok || spent <= budget || spent > budget+call+1e-4 {
		t.Errorf("the result %q does not say a cost over the $%.2f cap by at most one call ($%.4f)", res.Text, budget, call)
	}
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) == 0 }); !ok {
		t.Errorf("CLI processes left in the kennel after the task was stopped at its budget: %q", ps)
	}
	out, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		t.Fatalf("fetch task show %s: %v\n%s", id, err, out)
	}
	var shown struct {
		State      string  `json:"state"`
		Model      string  `json:"model"`
		CostUSD    float64 `json:"cost_usd"`
		CLICostUSD float64 `json:"cli_cost_usd"`
		PricedAs   string  `json:"cost_priced_as"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("fetch task show --json: %v\n%s", err, out)
	}
	t.Logf("recorded: %+v", shown)
	if shown.State != "failed" || shown.Model != "claude-sonnet-4-5-20250929" || shown.PricedAs != "claude-opus-4-8" {
		t.Errorf("recorded task: state %s, model %q, priced as %q; want failed on claude-sonnet-4-5-20250929, priced as claude-opus-4-8", shown.State, shown.Model, shown.PricedAs)
	}
	if out, err := w.fetchCLI("task", "ls"); err != nil || !regexp.MustCompile(id+`.*\$0\.\d{4} \(estimated\)`).MatchString(out) {
		t.Errorf("fetch task ls does not mark the cost of %s estimated: %v\n%s", id, err, out)
	}
	if out, err := w.fetchCLI("task", "show", id); err != nil || !strings.Contains(out, "priced its tokens as claude-opus-4-8") {
		t.Errorf("fetch task show does not say the cost of %s is estimated: %v\n%s", id, err, out)
	}
	// The coding CLI's part is what the cap stopped; Fetch's own call
	// that started the task is counted on top.
	if shown.CLICostUSD <= budget || shown.CLICostUSD > budget+call+1e-9 {
		t.Errorf("recorded CLI cost $%.4f; want over the $%.2f cap by at most one call ($%.4f)", shown.CLICostUSD, budget, call)
	}
	if shown.CostUSD > budget+call+1e-9 {
		t.Errorf("recorded cost $%.4f; want at most the cap plus one call ($%.4f)", shown.CostUSD, budget+call)
	}
}

// pausedAtBudget waits for the message that asks the owner about task id,
// paused at its budget, and checks that it says the cost is estimated and
// over the cap by at most one model call; it returns the message.
func (w *world) pausedAtBudget(m mark, id string, budget, call float64) seen {
	w.t.Helper()
	// The calls up to the cap take a while: 5 s apart.
	ask := w.awaitWithin(3*waitTimeout, m, regexp.MustCompile(`(?s)💰 Task `+id+`: I paused at the task budget of `+regexp.QuoteMeta(fmt.Sprintf("$%.2f", budget))+` \(FETCH_TASK_BUDGET_USD\)`),
		func(s seen) bool { return s.New }, "the question at the cap")
	w.t.Logf("the owner was asked:\n%s", ask.Text)
	if !strings.Contains(ask.Text, "(estimated: Fetch does not know the price of the CLI's model; it priced its tokens as claude-opus-4-8, to err high)") {
		w.t.Errorf("the question at the cap %q does not say the cost is estimated", ask.Text)
	}
	if spent, ok := dollars(ask.Text, "it has cost "); !ok || spent <= budget || spent > budget+call+1e-4 {
		w.t.Errorf("the question at the cap %q does not say a cost over the $%.2f cap by at most one call ($%.4f)", ask.Text, budget, call)
	}
	if !strings.Contains(ask.Text, "Its work so far is on branch fetch/"+id) {
		w.t.Errorf("the question at the cap %q does not say where the work is", ask.Text)
	}
	return ask
}

// J-cost-raise: at the cap, a two-way Claude run is paused at its next
// turn, not killed: its work so far is committed on the task's branch
// while the owner is asked; "Raise" lets it go on in the same session,
// under the raised cap, to its end.
func TestJourneyCostCapRaise(t *testing.T) {
	t.Parallel()
	const call = (2000*5 + 100*25) / 1e6
	w := newWorld(t, "app")
	w.env["FETCH_TASK_BUDGET_USD"] = "0.05"
	w.start()
	w.ask(ownerID, "/model claude-sonnet-4-5-20250929", regexp.MustCompile(`^Tasks here use the model claude-sonnet-4-5-20250929 from now on`))

	m, status := w.startTask(ownerID, "refactor the app workspace", "refactor everything [scenario:spend:120] [every:5000ms] [file:refactor.log]", "app")
	id := taskID(t, status.Text)
	ask := w.pausedAtBudget(m, id, 0.05, call)
	// The work so far is on the branch while the task waits.
	got, err := w.gitShow("app", "fetch/"+id, "refactor.log")
	if err != nil {
		t.Fatalf("the work so far is not on fetch/%s while the task waits at its budget: %v", id, err)
	}
	if !strings.Contains(got, "call 1\n") {
		t.Errorf("refactor.log on fetch/%s = %q; want the calls made before the cap", id, got)
	}
	var shown struct {
		State    string `json:"state"`
		AtBudget bool   `json:"at_budget"`
	}
	if out, err := w.fetchCLI("task", "show", "--json", id); err != nil || json.Unmarshal([]byte(out), &shown) != nil || shown.State != "waiting_input" || !shown.AtBudget {
		t.Errorf("task %s does not wait for the owner at its cap: %v\n%s", id, err, out)
	}

	raised := w.mark(ownerID)
	w.d.Click(ownerID, ask.Msg.ID, w.button(ask, "Raise the cap to $0.10"))
	w.awaitNew(raised, regexp.MustCompile(`^💰 Task `+id+`'s cap is \$0\.10 now; it goes on`), "the raise's reply")
	res := w.awaitResult(raised, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the result after the raise")
	t.Logf("the owner read:\n%s", res.Text)
	// It went on in the same CLI session, on the same branch.
	got, err = w.gitShow("app", "fetch/"+id, "refactor.log")
	if err != nil || !strings.Contains(got, "call 1\n") {
		t.Errorf("refactor.log on fetch/%s after the raise = %q (%v); want the first run's work kept", id, got, err)
	}
	if _, err := w.gitShow("app", "fetch/"+id, "FETCH_DONE.md"); err != nil {
		t.Errorf("the run after the raise left nothing on fetch/%s: %v", id, err)
	}
	if cost, ok := dollars(res.Text, "Cost: "); !ok || cost > 0.10 {
		t.Errorf("the result %q does not say a cost within the raised $0.10 cap", res.Text)
	}
}
