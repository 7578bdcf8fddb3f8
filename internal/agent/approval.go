package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
)

// pendingKind is what an agent's prompt waits for.
type pendingKind string

const (
	kindApproval pendingKind = "approval"
	kindQuestion pendingKind = "question"
	kindBudget   pendingKind = "budget"
)

// promptOwner marks prompts the agent opened, in their Action JSON.
const promptOwner = "agent"

// questionTTL is how long a question to the owner stays open.
const questionTTL = 24 * time.Hour

// pending is an agent prompt's Action: the full action an approval would
// allow, or what a question continues.
type pending struct {
	By        string          `json:"by"`
	Kind      pendingKind     `json:"kind"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Question  string          `json:"question,omitempty"`
	// Scope is what a budget pause was over: "turn" or "day".
	Scope string `json:"scope,omitempty"`
}

// approveButtons answer an approval.
var approveButtons = []chat.Action{
	{Label: "Approve", Send: "yes", Style: chat.Primary},
	{Label: "Deny", Send: "no", Style: chat.Danger},
}

// ask opens a prompt for the owner; the conversation moves its mode to
// what the prompt calls for (GUARDING for an approval, WAITING for a
// question).
func (r *run) ask(ctx context.Context, kind store.PromptKind, body string, p pending) error {
	p.By = promptOwner
	action, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("agent: ask: %w", err)
	}
	ttl := questionTTL
	if kind == store.Approval {
		ttl = r.a.cfg.ApprovalTTL
	}
	exp := r.a.now().Add(ttl)
	if _, err := r.a.cfg.Store.AddPrompt(ctx, store.Prompt{ConversationID: r.conv, Kind: kind, Body: body, Action: string(action), ExpiresAt: &exp}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errors.New("another question to the owner is still open; wait for their answer")
		}
		return err
	}
	return nil
}

// requestApproval turns a dangerous call into an approval prompt showing
// the full action; the call itself runs only in Resolved, after a yes.
func (r *run) requestApproval(ctx context.Context, t *tool, p prepared) string {
	danger := p.danger
	if danger == "" {
		danger = "supervised mode: every task needs your approval"
	}
	args, describe := p.args, p.describe
	if p.bind != nil {
		args, describe = p.bind(r)
	}
	body := fmt.Sprintf("%s\n%s %s", describe, t.name, args)
	err := r.ask(ctx, store.Approval, body, pending{Kind: kindApproval, Tool: t.name, Arguments: json.RawMessage(args)})
	if err != nil {
		r.a.log.Info("approval not opened", "conversation", r.conv, "tool", t.name, "err", err)
		return fmt.Sprintf("error: %s needs the owner's approval, but it could not be asked: %v", t.name, err)
	}
	r.end(fmt.Sprintf("I need your approval for this (%s):\n%s\nApprove?", danger, body), approveButtons)
	return "Needs the owner's approval (" + danger + "). They have been asked; it has NOT been done. End your turn now."
}

// Resolved continues after the conversation's user answered one of the
// agent's prompts: an approved action runs (a denied one does not), a
// question's answer goes back to the model, a budget pause continues or
// stops. role is the answerer's: what continues is refused the owner's
// tools as a turn of theirs is (run.refuse). Prompts the agent did not
// open go to the next resolver.
func (a *Agent) Resolved(ctx context.Context, p store.Prompt, answer string, role chat.Role) ([]chat.Reply, error) {
	var act pending
	if err := json.Unmarshal([]byte(p.Action), &act); err != nil || act.By != promptOwner {
		if a.cfg.Next != nil {
			return a.cfg.Next.Resolved(ctx, p, answer, role)
		}
		return nil, nil
	}
	r, err := a.newRun(ctx, p.ConversationID, intent.Action, role)
	if err != nil {
		return nil, err
	}
	switch act.Kind {
	case kindApproval:
		return a.approved(ctx, r, act, answer)
	case kindQuestion:
		return r.run(ctx, answer)
	case kindBudget:
		if answer != "yes" {
			r.msgs = []llm.Message{{Role: llm.User, Content: "(The owner declined more budget.)"}, {Role: llm.Assistant, Content: "Stopped there."}}
			r.save(ctx)
			return []chat.Reply{chat.Text("OK, I stopped there.")}, nil
		}
		if act.Scope == "day" {
			b := a.cfg.Budget
			if err := a.cfg.Store.Grant(ctx, store.Day(a.now()), b.DayTokens, b.DayCost); err != nil {
				return nil, fmt.Errorf("agent: grant: %w", err)
			}
		}
		return r.run(ctx, "(The owner allowed more budget. Continue where you stopped.)")
	}
	return nil, fmt.Errorf("agent: prompt %d has an unknown kind %q", p.ID, act.Kind)
}

// approved carries out an approved action, or records the denial.
func (a *Agent) approved(ctx context.Context, r *run, act pending, answer string) ([]chat.Reply, error) {
	desc := act.Tool + " " + string(act.Arguments)
	if answer != "yes" {
		r.msgs = []llm.Message{{Role: llm.User, Content: "(The owner denied: " + desc + ")"}, {Role: llm.Assistant, Content: "Understood; I did not do it."}}
		r.save(ctx)
		a.audit(ctx, r.conv, "denied", desc)
		return nil, nil
	}
	t := a.tools[act.Tool]
	if t == nil {
		return nil, fmt.Errorf("agent: approved tool %q does not exist", act.Tool)
	}
	if refusal := r.refuse(t); refusal != "" {
		// An approval opened by the owner's turn and answered by someone
		// else: nothing runs.
		r.msgs = []llm.Message{{Role: llm.User, Content: "(Approved by someone who is not the owner: " + desc + ")"}, {Role: llm.Assistant, Content: "Only the owner may do that; I did not do it."}}
		r.save(ctx)
		a.audit(ctx, r.conv, "refused", desc)
		return []chat.Reply{chat.Text("Only the owner may " + t.ownerOnly + "; I did not do it.")}, nil
	}
	p, err := t.decode(string(act.Arguments))
	if err != nil {
		return nil, fmt.Errorf("agent: approved %s: %w", act.Tool, err)
	}
	result, err := p.run(ctx, r)
	if err != nil {
		result = fmt.Sprintf("%s failed: %v", act.Tool, err)
	}
	a.audit(ctx, r.conv, "approved", desc+" → "+result)
	replies := []chat.Reply{chat.Text(result)}
	more, err := r.run(ctx, fmt.Sprintf("(The owner approved %s. Result: %s) Continue with the request if anything is left; otherwise confirm in one sentence.", desc, result))
	return append(replies, more...), err
}

func (a *Agent) audit(ctx context.Context, conv, action, detail string) {
	if err := a.cfg.Store.Audit(context.WithoutCancel(ctx), store.AuditEntry{ConversationID: conv, Actor: "fetch", Action: action, Detail: detail}); err != nil {
		a.log.Error("audit", "action", action, "err", err)
	}
}
