package task

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
)

// The task budget (Config.TaskBudgetUSD, or a task's own BudgetUSD once
// the owner raised it) is checked on each usage event as the run reports
// it (eventWriter.checkBudget), so a stop comes at most one CLI message
// after the cap. A one-shot run is stopped there and fails with
// budgetMessage. A two-way run of a conversation's task is paused
// instead: its CLI is asked to end its turn (harness.Mailbox.Interrupt),
// the run ends as a run does, its work committed and recorded on the
// branch, and the task waits (WaitingInput, AtBudget) for the owner to
// raise its cap (RaiseBudget: a follow-up turn in the same session) or
// stop it (StopAtBudget: failed, as a budget stop).

// pauseGrace is how long a CLI asked to end its turn at the budget may
// take before its run is stopped.
const pauseGrace = 30 * time.Second

// budgetRaised is what the CLI is told when the owner raised the cap.
//
//go:embed budget_raised.md
var budgetRaised string

// budgetOf is t's cap: its own once raised, else the configured one; 0
// for none.
func (e *Engine) budgetOf(t Task) float64 {
	if t.BudgetUSD > 0 {
		return t.BudgetUSD
	}
	return e.cfg.TaskBudgetUSD
}

// budgetSetting names the setting that sets the cap.
func (e *Engine) budgetSetting() string {
	if e.cfg.TaskBudgetSetting == "" {
		return "the task budget"
	}
	return e.cfg.TaskBudgetSetting
}

// costText is a cost as the owner reads it, marked estimated when priced
// as another model.
func costText(usd float64, pricedAs string) string {
	s := fmt.Sprintf("$%.4f", usd)
	if pricedAs != "" {
		s += " " + harness.EstimatedAs(pricedAs)
	}
	return s
}

// budgetMessage is the error of a task stopped at its budget, having
// cost spent. Its cost is an estimate when t.CostPricedAs names the model
// whose price stood in for the CLI's, and the message says so.
func (e *Engine) budgetMessage(t Task, spent float64) string {
	setting := e.budgetSetting()
	if t.BudgetUSD > 0 {
		return fmt.Sprintf("stopped at the task's budget of $%.2f (raised by the owner from %s): it had cost %s.",
			t.BudgetUSD, setting, costText(spent, t.CostPricedAs))
	}
	return fmt.Sprintf("stopped at the task budget of $%.2f (%s): it had cost %s. Raise %s, or set it to 0 for no cap, and run the task again.",
		e.cfg.TaskBudgetUSD, setting, costText(spent, t.CostPricedAs), setting)
}

// pauseAtBudget asks a two-way run's CLI to end its turn at the cap, so
// that the task waits for the owner instead of being stopped. It reports
// false when the run cannot wait so: a one-shot run, a plan, a task
// nobody in a chat can answer, a run followed again after a restart. It
// never blocks (it is called from the runner's callback).
func (s *steer) pauseAtBudget() bool {
	if s == nil || s.mode != harness.ModeWork || s.t.ConversationID == "" || s.ht.Mailbox == nil {
		return false
	}
	return s.ht.Mailbox.Interrupt()
}

// pauseAt ends a two-way run paused at the budget: its work is recorded
// on the branch (finish) and the task waits for the owner to raise its
// cap or stop.
func (e *Engine) pauseAt(ctx context.Context, t Task, spent float64) bool {
	t.AtBudget, t.CapUSD = true, e.budgetOf(t)
	t.CostUSD = max(t.CostUSD, spent)
	t.Question = fmt.Sprintf("I paused at the task budget of $%.2f (%s): it has cost %s. Its work so far is on branch %s. Raise its cap to $%.2f and let it go on, or stop it here?",
		t.CapUSD, e.budgetSetting(), costText(t.CostUSD, t.CostPricedAs), t.Branch, t.SuggestedCap())
	if t.BudgetUSD > 0 {
		t.Question = strings.Replace(t.Question, "("+e.budgetSetting()+")", "(raised before)", 1)
	}
	return e.finish(ctx, t, WaitingInput, "")
}

// maxBudget bounds a cap the owner sets, in dollars.
const maxBudget = 10_000

// RaiseBudget raises the cap of task id, which waits at its budget, to
// usd (0: Task.SuggestedCap) and lets it go on: a follow-up run resumes its
// CLI's session. It fails with ErrState when the task does not wait at
// its budget, and with ErrInvalid for a cap that is not above what the
// task cost.
func (e *Engine) RaiseBudget(ctx context.Context, id string, usd float64, by string) (Task, error) {
	if !e.isOpen() {
		return Task{}, fmt.Errorf("task: raise budget: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if t.State != WaitingInput || !t.AtBudget {
		return t, fmt.Errorf("task: raise the budget of %s: it is %s, not waiting at its budget: %w", id, t.State, ErrState)
	}
	if usd == 0 {
		usd = t.SuggestedCap()
	}
	switch {
	case math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 || usd > maxBudget:
		return t, fmt.Errorf("task: raise the budget of %s: $%v is not a cap (a number of dollars up to %d): %w", id, usd, maxBudget, ErrInvalid)
	case usd <= t.CostUSD:
		return t, fmt.Errorf("task: raise the budget of %s: a cap of $%.2f is not above what it cost ($%.4f): %w", id, usd, t.CostUSD, ErrInvalid)
	}
	t.State, t.BudgetUSD, t.AtBudget, t.Question, t.Owner = Running, usd, false, "", e.owner
	t.Answer = strings.TrimSpace(strings.ReplaceAll(budgetRaised, "{{budget}}", fmt.Sprintf("$%.2f", usd)))
	if err := e.save(ctx, t, WaitingInput, fmt.Sprintf("budget raised to $%.2f by %s", usd, by)); err != nil {
		return t, fmt.Errorf("task: raise budget: %w", err)
	}
	e.follow(t, false)
	return t, nil
}

// StopAtBudget ends task id, which waits at its budget, as a budget stop:
// failed, with its work so far on its branch. It fails with ErrState when
// the task does not wait at its budget.
func (e *Engine) StopAtBudget(ctx context.Context, id, by string) (Task, error) {
	t, err := e.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if t.State != WaitingInput || !t.AtBudget {
		return t, fmt.Errorf("task: stop %s at its budget: it is %s, not waiting at its budget: %w", id, t.State, ErrState)
	}
	reason := e.budgetMessage(t, t.CostUSD)
	t.State, t.AtBudget, t.Question, t.Owner, t.EndedAt = Failed, false, "", "", e.now()
	t.Error = e.store.Scrub(reason)
	if err := e.save(ctx, t, WaitingInput, "stopped at its budget by "+by); err != nil {
		return t, fmt.Errorf("task: stop at budget: %w", err)
	}
	e.endSteer(ctx, t.ID)
	e.notify(ctx, Update{Kind: Ended, Task: t})
	if e.cfg.Adopt {
		e.startQueued(ctx) // the workspace is free
	}
	return t, nil
}

// Words that answer a task waiting at its budget (Respond).
var (
	answerRaise = regexp.MustCompile(`(?i)^\s*(?:raise|yes|y|ok|okay|go on|continue)\b(?:\s+(?:it|the cap|the budget))?(?:\s+to)?\s*(?:\$?\s*([0-9]+(?:\.[0-9]+)?))?\s*[.!]*\s*$`)
	answerStop  = regexp.MustCompile(`(?i)^\s*(?:stop|no|n)\b(?:\s+(?:it|here|there))?\s*[.!]*\s*$`)
)

// answerAtBudget takes an answer to a task waiting at its budget: "raise"
// (to an amount, or the suggested one) or "stop".
func (e *Engine) answerAtBudget(ctx context.Context, t Task, answer string) error {
	if m := answerRaise.FindStringSubmatch(answer); m != nil {
		var usd float64
		if m[1] != "" {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return fmt.Errorf("task: raise the budget of %s: %q: %w", t.ID, m[1], ErrInvalid)
			}
			usd = v
		}
		_, err := e.RaiseBudget(ctx, t.ID, usd, "answer")
		return err
	}
	if answerStop.MatchString(answer) {
		_, err := e.StopAtBudget(ctx, t.ID, "answer")
		return err
	}
	return fmt.Errorf("task: %s waits at its budget: answer raise (or raise to AMOUNT) or stop: %w", t.ID, ErrInvalid)
}
