package journey

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// J-cost-estimated: Claude Code reporting claude-sonnet-4-5-20250929 (its
// id for Sonnet 4.5, a model Fetch's price table has no price for) and
// growing usage is still stopped at FETCH_TASK_BUDGET_USD: its tokens are
// priced as the dearest Anthropic model Fetch knows (claude-opus-4-8,
// $5/$25 per million tokens), the result says the cost is estimated and
// as which model, and the task's recorded cost passes the cap by at most
// one model call's cost.
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

	// A model call every 1.5 s for up to a minute: the stop reaches the
	// CLI between two calls.
	m, status := w.startTask(ownerID, "refactor the app workspace", "refactor everything [scenario:spend:60] [every:1500ms]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`❌ Task `+id+` failed on app`), "the stopped task's result")
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
