package agent_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
)

func TestDailyBudgetPausesAndAsks(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.Budget = agent.Budget{DayTokens: 200} })
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "a", Name: "workspace_list", Arguments: "{}"}), // 120 tokens
		testkit.Step{Text: "Listed.", PromptTokens: 100, CompletionTokens: 20, Cost: 0.01},
	)
	r.say(intent.Action, "list my workspaces")
	spend, err := r.agent.Spend(t.Context())
	if err != nil || spend.Tokens != 240 || spend.TokenBudget != 200 || spend.Cost != 0.01 {
		t.Fatalf("spend = %+v, %v", spend, err)
	}
	// Over today's budget: the next turn asks instead of calling the LLM.
	replies := r.say(intent.Action, "and now the status")
	if len(r.llm.Requests()) != 2 {
		t.Fatalf("%d requests: the LLM was called over budget", len(r.llm.Requests()))
	}
	if !strings.Contains(texts(replies), "today's 200 tokens are used up") || len(replies[0].Actions) != 2 {
		t.Fatalf("reply %+v", replies)
	}
	p, err := r.db.OpenPrompt(t.Context(), conv)
	if err != nil || p.Kind != store.Question {
		t.Fatalf("prompt %+v %v", p, err)
	}
	// Yes grants another day's budget and continues.
	r.db.ResolvePrompt(t.Context(), p.ID, "yes")
	r.llm.Script(testkit.Say("demo is clean."))
	more, err := r.agent.Resolved(t.Context(), p, "yes", chat.Owner)
	if err != nil || texts(more) != "demo is clean." {
		t.Fatalf("after yes: %q, %v", texts(more), err)
	}
	if spend, _ := r.agent.Spend(t.Context()); spend.TokenBudget != 400 {
		t.Fatalf("budget after the grant = %d; want 400", spend.TokenBudget)
	}
}

func TestTurnBudgetPausesMidTurn(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.Budget = agent.Budget{TurnTokens: 150} })
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "a", Name: "workspace_list", Arguments: "{}"}),
		testkit.Use(testkit.Call{ID: "b", Name: "workspace_status", Arguments: `{"name":"demo"}`}),
	)
	replies := r.say(intent.Action, "look at everything")
	if len(r.llm.Requests()) != 2 || !strings.Contains(texts(replies), "this request has used 240 tokens") {
		t.Fatalf("%d requests, reply %q", len(r.llm.Requests()), texts(replies))
	}
	// No silent continuation; a "no" stops.
	p, _ := r.db.OpenPrompt(t.Context(), conv)
	r.db.ResolvePrompt(t.Context(), p.ID, "no")
	more, err := r.agent.Resolved(t.Context(), p, "no", chat.Owner)
	if err != nil || !strings.Contains(texts(more), "stopped") || len(r.llm.Requests()) != 2 {
		t.Fatalf("after no: %q %v, %d requests", texts(more), err, len(r.llm.Requests()))
	}
}

// TestNegativeCostIsNotRecorded: a completion whose provider reports a
// negative cost does not lower the day's spend; it counts as not
// reported.
func TestNegativeCostIsNotRecorded(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "a", Name: "workspace_list", Arguments: "{}"}),
		testkit.Step{Text: "Listed.", PromptTokens: 100, CompletionTokens: 20, Cost: -5},
	)
	r.say(intent.Action, "list my workspaces")
	spend, err := r.agent.Spend(t.Context())
	if err != nil || spend.Cost != 0 || spend.Tokens != 120 {
		t.Fatalf("spend = %+v, %v; want the first call only (120 tokens, no cost) and the refused one left out", spend, err)
	}
}
