package agent

import (
	"context"
	"fmt"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// overrun is a budget the next completion would go over.
type overrun struct {
	// scope is "turn" or "day".
	scope string
	why   string
}

// overBudget tells whether the next completion would go over a budget.
func (r *run) overBudget(ctx context.Context) (*overrun, error) {
	b := r.a.cfg.Budget
	switch {
	case b.TurnTokens > 0 && r.usage.Tokens() >= b.TurnTokens:
		return &overrun{"turn", fmt.Sprintf("this request has used %d tokens; the limit per request is %d", r.usage.Tokens(), b.TurnTokens)}, nil
	case b.TurnCost > 0 && r.usage.Cost >= b.TurnCost:
		return &overrun{"turn", fmt.Sprintf("this request has cost $%.4f; the limit per request is $%.2f", r.usage.Cost, b.TurnCost)}, nil
	}
	if b.DayTokens == 0 && b.DayCost == 0 {
		return nil, nil
	}
	spent, granted, err := r.a.cfg.Store.Spent(ctx, store.Day(r.a.now()))
	if err != nil {
		return nil, fmt.Errorf("agent: budget: %w", err)
	}
	switch {
	case b.DayTokens > 0 && spent.Tokens() >= b.DayTokens+granted.Tokens:
		return &overrun{"day", fmt.Sprintf("today's %d tokens are used up (%d spent)", b.DayTokens+granted.Tokens, spent.Tokens())}, nil
	case b.DayCost > 0 && spent.Cost >= b.DayCost+granted.Cost:
		return &overrun{"day", fmt.Sprintf("today's budget of $%.2f is used up ($%.4f spent)", b.DayCost+granted.Cost, spent.Cost)}, nil
	}
	return nil, nil
}

// pause stops a turn over budget and asks the owner whether to go on.
func (r *run) pause(ctx context.Context, o *overrun) ([]chat.Reply, error) {
	scope, why := o.scope, o.why
	reply := chat.Reply{Text: "I paused: " + why + ". Continue anyway?", Actions: []chat.Action{
		{Label: "Continue", Send: "yes", Style: chat.Primary},
		{Label: "Stop", Send: "no", Style: chat.Secondary},
	}}
	if err := r.ask(ctx, store.Question, reply.Text, pending{Kind: kindBudget, Scope: scope}); err != nil {
		r.a.log.Error("budget question", "conversation", r.conv, "err", err)
		reply = chat.Text("I stopped: " + why + ". Raise the budget or try again tomorrow.")
	}
	r.close(reply.Text)
	r.save(ctx)
	return []chat.Reply{reply}, nil
}

// Spend is today's spend for /status.
func (a *Agent) Spend(ctx context.Context) (*instincts.Spend, error) {
	spent, granted, err := a.cfg.Store.Spent(ctx, store.Day(a.now()))
	if err != nil {
		return nil, fmt.Errorf("agent: spend: %w", err)
	}
	s := &instincts.Spend{Tokens: spent.Tokens(), Cost: spent.Cost}
	if a.cfg.Budget.DayTokens > 0 {
		s.TokenBudget = a.cfg.Budget.DayTokens + granted.Tokens
	}
	if a.cfg.Budget.DayCost > 0 {
		s.CostBudget = a.cfg.Budget.DayCost + granted.Cost
	}
	return s, nil
}

// overTaskDay says why a new task needs the owner's approval when today's
// spend (tasks and orchestrator, store.DaySpend) is over the daily task
// budget; "" when it is not, or when there is none. A spend that cannot be
// read asks too: the cap is not silently skipped.
func (r *run) overTaskDay(ctx context.Context) string {
	limit := r.a.cfg.Budget.TaskDayCost
	if limit <= 0 {
		return ""
	}
	spent, err := r.a.cfg.Store.DaySpend(ctx, store.Day(r.a.now()))
	if err != nil {
		r.a.log.Error("read today's spend", "conversation", r.conv, "err", err)
		return fmt.Sprintf("today's spend could not be read to check the daily budget of $%.2f", limit)
	}
	if spent < limit {
		return ""
	}
	return fmt.Sprintf("today's spend $%.4f is over the daily budget of $%.2f for tasks and Fetch's own calls", spent, limit)
}
