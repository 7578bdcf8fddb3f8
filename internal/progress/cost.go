package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/store"
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

// Limits describes the subscription windows the coding CLIs last reported
// (store.CLILimits), for /status: per CLI, each window's share used and
// when it resets, and when the CLI told it; a window whose reset passed
// is left out (it started again). "" when none is left.
func Limits(ls []store.CLILimit, now time.Time) string {
	var parts []string
	for i := 0; i < len(ls); {
		cli := ls[i].Harness
		var ws []string
		var told time.Time
		for ; i < len(ls) && ls[i].Harness == cli; i++ {
			l := ls[i]
			if !l.ResetsAt.IsZero() && !l.ResetsAt.After(now) {
				continue
			}
			w := harness.Window{Name: l.Name, UsedPercent: l.UsedPercent, Status: l.Status, ResetsAt: l.ResetsAt}
			s := w.String()
			if w.Near() {
				s = "⚠️ " + s
			}
			ws = append(ws, s)
			if l.UpdatedAt.After(told) {
				told = l.UpdatedAt
			}
		}
		if len(ws) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (told %s)", cli, strings.Join(ws, "; "), told.UTC().Format("Jan 2 15:04 UTC")))
		}
	}
	return strings.Join(parts, " · ")
}
