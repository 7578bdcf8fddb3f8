package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/metrics"
	"github.com/fetch-dev/fetch/internal/store"
)

// identityDir is where the owner's identity files overlay the defaults.
const identityDir = "identity"

// brain is the LLM side of Fetch: the identity, the client and the agent.
// A nil *brain (no OPENROUTER_API_KEY) leaves the conversation without an
// agent: instincts work and requests get noAgentReply.
type brain struct {
	ids    *identity.Set
	client *llm.Client
	agent  *agent.Agent
	budget agent.Budget
}

// brainDeps are the parts the agent's tools drive; nil ones answer that
// they are not available.
type brainDeps struct {
	workspaces agent.Workspaces
	code       agent.Code
	tasks      agent.Tasks
	running    agent.Running
	// metrics counts the LLM calls; nil: not counted.
	metrics *metrics.Metrics
}

// newBrain builds the brain; nil without OPENROUTER_API_KEY. It starts
// nothing: call open.
func newBrain(cfg Config, db *store.DB, log *slog.Logger, deps brainDeps) (*brain, error) {
	if cfg.OpenRouter == "" {
		return nil, nil
	}
	client, err := llm.New(llm.Config{BaseURL: cfg.LLMURL, APIKey: cfg.OpenRouter, Model: cfg.Model, Logger: log.With("component", "llm")})
	if err != nil {
		return nil, err
	}
	ids := identity.New(filepath.Join(cfg.DataDir, identityDir), log.With("component", "identity"))
	b := &brain{ids: ids, client: client,
		budget: agent.Budget{TurnTokens: cfg.BudgetTurnTokens, TurnCost: cfg.BudgetTurnUSD, DayTokens: cfg.BudgetDayTokens, DayCost: cfg.BudgetDayUSD, TaskDayCost: cfg.DailyBudgetUSD}}
	b.agent, err = agent.New(agent.Config{
		Store: db, LLM: meter(client, deps.metrics), Identity: ids, Workspaces: deps.workspaces, Code: deps.code, Tasks: deps.tasks, Running: deps.running,
		Logger:    log.With("component", "agent"),
		MaxRounds: cfg.MaxRounds, TurnTime: cfg.TurnTimeout, ApprovalTTL: cfg.ApprovalTTL,
		Budget:    b.budget,
		Harnesses: harnessNames(harness.NewRegistry(), cfg.Harness),
	})
	if err != nil {
		client.Close()
		return nil, err
	}
	return b, nil
}

// open loads the identity and starts watching its files.
func (b *brain) open(ctx context.Context) error {
	if b == nil {
		return nil
	}
	if err := b.ids.Open(ctx); err != nil {
		return fmt.Errorf("brain: %w", err)
	}
	return nil
}

// wire puts the brain into a conversation configuration.
func (b *brain) wire(c *conversation.Config) {
	if b == nil {
		return
	}
	c.Agent = conversationAgent{b.agent}
	c.Resolver = b.agent
	c.Spend = b.spend
	c.Memory = b.agent
}

// spend is today's spend and the budgets for /status: the day's from the
// agent (with what the owner granted), the request's from the
// configuration.
func (b *brain) spend(ctx context.Context) (*instincts.Spend, error) {
	s, err := b.agent.Spend(ctx)
	if err != nil {
		return nil, err
	}
	s.TurnTokens, s.TurnCost = b.budget.TurnTokens, b.budget.TurnCost
	return s, nil
}

func (b *brain) close(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.client.Close()
	if err := b.ids.Close(ctx); err != nil {
		return fmt.Errorf("brain: %w", err)
	}
	return nil
}

// conversationAgent adapts the agent to conversation.Agent, whose Turn
// the agent does not import.
type conversationAgent struct{ a *agent.Agent }

func (c conversationAgent) Respond(ctx context.Context, t conversation.Turn) ([]chat.Reply, error) {
	return c.a.Respond(ctx, agent.Turn{
		ConversationID: t.ConversationID, UserID: t.UserID, Role: t.Role, Text: t.Text,
		Intent: t.Intent, Notify: t.Notify, Attachments: t.Attachments,
	})
}

var (
	_ conversation.Agent    = conversationAgent{}
	_ conversation.Resolver = (*agent.Agent)(nil)
	_ conversation.Memory   = (*agent.Agent)(nil)
)

// harnessNames are the harnesses the task engine knows (it builds its
// registry the same way), for the agent to name when a call asks for
// another.
func harnessNames(r *harness.Registry, def string) []string {
	var out []string
	for _, n := range r.Names() {
		out = append(out, string(n))
	}
	if harness.IsACPName(harness.Name(def)) {
		out = append(out, def)
	}
	return out
}
