package progress

import (
	"fmt"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
)

// Cost says what a task cost, for its end message and the command line:
// the total (its coding CLI's runs and Fetch's own LLM calls for it), or
// that the CLI's tokens had no known price; "" when nothing was reported.
// A cost priced as another model (Task.CostPricedAs) says it is estimated.
func Cost(t task.Task) string {
	var s string
	switch {
	case t.CostUSD > 0:
		s = fmt.Sprintf("$%.4f", t.CostUSD)
		if llm := t.CostUSD - t.CLICostUSD; llm > 0.00005 {
			s += fmt.Sprintf(" (coding CLI $%.4f, Fetch's own LLM calls $%.4f)", t.CLICostUSD, llm)
		}
		if t.CostPricedAs != "" {
			s += " " + harness.EstimatedAs(t.CostPricedAs)
		}
		if t.CostUnknown {
			s += " plus tokens of a model whose price Fetch does not know"
		}
	case t.CostUnknown:
		s = "unknown: the coding CLI reported tokens of a model whose price Fetch does not know"
	}
	return s
}
