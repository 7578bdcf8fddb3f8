package conversation

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// Steering is what the conversation needs of the task engine to steer
// two-way coding CLIs: their pending requests, the owner's answers, the
// policy (/policy) and tasks that plan first (/plan).
type Steering interface {
	PendingRequests(ctx context.Context, conversationID string) ([]task.CLIRequest, error)
	Request(ctx context.Context, id int64) (task.CLIRequest, error)
	AnswerRequest(ctx context.Context, id int64, a task.RequestAnswer) (task.CLIRequest, error)
	CreatePlan(ctx context.Context, req task.Request) (task.Task, error)
	PolicyText(ctx context.Context, workspace string, level instincts.Autonomy) (string, error)
	// Get, Tell, Retry and Withdraw carry follow-ups (follow.go).
	Get(ctx context.Context, id string) (task.Task, error)
	Tell(ctx context.Context, id, text, by string, atts ...task.Attachment) (task.Told, error)
	Retry(ctx context.Context, id string) error
	Withdraw(ctx context.Context, messageID int64) (task.Message, error)
	RemovePolicyRule(ctx context.Context, workspace, id, by string) (string, error)
	// RaiseBudget and StopAtBudget answer a task that waits at its
	// budget (follow.go: /budget).
	RaiseBudget(ctx context.Context, id string, usd float64, by string) (task.Task, error)
	StopAtBudget(ctx context.Context, id, by string) (task.Task, error)
}

// Typed answers to the oldest pending request.
var (
	typedYes  = regexp.MustCompile(`(?i)^\s*(?:y|yes|yep|yeah|ok|okay|allow|allow once|approve|approved|go ahead|👍|✅)\s*[.!]*\s*$`)
	typedTask = regexp.MustCompile(`(?i)^\s*(?:a|allow for this task|allow for the task)\s*[.!]*\s*$`)
	typedNo   = regexp.MustCompile(`(?i)^\s*(?:n|no|nope|deny|denied|don'?t|👎|❌)\s*(?:[,:;.!—-]+\s*(?:because\s+)?(.*?))?\s*$`)
)

// steerMessage takes what steers a coding CLI: /req (the request buttons),
// /policy, /plan, and, while requests wait and no prompt of Fetch's own is
// open, a typed yes/a/no ("no, because …") or free text (a question's
// answer, a plan's revision) for the oldest request. It reports whether it
// took the message.
func (s *session) steerMessage(ctx context.Context, it item, st instincts.State, prompt *store.Prompt) ([]chat.Reply, bool) {
	sg := s.m.cfg.Steering
	if sg == nil {
		return nil, false
	}
	text, name, args := command(it.text)
	switch name {
	case "/req":
		return s.reqCommand(ctx, it, args), true
	case "/policy":
		return s.policyCommand(ctx, it, st, args), true
	case "/plan":
		return s.planCommand(ctx, it, st, args), true
	}
	if strings.HasPrefix(text, "/") || prompt != nil || text == "" {
		return nil, false
	}
	pending, err := sg.PendingRequests(ctx, s.c.id)
	if err != nil {
		s.m.log.Error("pending requests", "conversation", s.c.id, "err", err)
		return nil, false
	}
	if len(pending) == 0 {
		return nil, false
	}
	s.taken = inPrompt
	r := pending[0]
	var a task.RequestAnswer
	switch {
	case typedTask.MatchString(text) && r.Kind == harness.KindPermission:
		a.Reply = task.ReplyAllowTask
	case typedYes.MatchString(text) && r.Kind == harness.KindPermission:
		a.Reply = task.ReplyAllow
	case typedYes.MatchString(text) && r.Kind == harness.KindPlan:
		a.Reply = task.ReplyApprove
	case typedNo.MatchString(text) && r.Kind == harness.KindPlan:
		a.Reply = task.ReplyCancel
	case typedNo.MatchString(text) && r.Kind == harness.KindPermission:
		a.Reply, a.Text = task.ReplyDeny, typedNo.FindStringSubmatch(text)[1]
	case r.Kind == harness.KindAsk:
		a.Reply, a.Text = task.ReplyAnswer, text
	case r.Kind == harness.KindPlan:
		a.Reply, a.Text = task.ReplyRevise, text
	default:
		return []chat.Reply{chat.Text(fmt.Sprintf("Task %s waits for your answer to request %d (%s): yes, no (\"no, because …\" tells the CLI why), or /stop.", r.TaskID, r.ID, r.Summary))}, true
	}
	replies := s.answerRequest(ctx, it, r.ID, a)
	if len(pending) > 1 {
		replies = append(replies, chat.Text(fmt.Sprintf("That answered the oldest request (%d, task %s). %d more wait; use their buttons or /req ID.", r.ID, r.TaskID, len(pending)-1)))
	}
	return replies, true
}

// reqCommand is /req ID allow|task|always|deny [REASON]|answer TEXT|approve|revise TEXT|cancel|full.
func (s *session) reqCommand(ctx context.Context, it item, args string) []chat.Reply {
	s.taken = inPrompt
	const usage = "Usage: /req ID allow | task | always | deny [reason] | answer TEXT | approve | revise TEXT | cancel | full"
	idText, rest, _ := strings.Cut(args, " ")
	id, err := strconv.ParseInt(strings.TrimPrefix(idText, "#"), 10, 64)
	if err != nil || id <= 0 {
		return []chat.Reply{chat.Text(usage)}
	}
	verb, text, _ := strings.Cut(strings.TrimSpace(rest), " ")
	text = strings.TrimSpace(text)
	reply := map[string]task.Reply{
		"allow": task.ReplyAllow, "task": task.ReplyAllowTask, "always": task.ReplyAllowAlways, "deny": task.ReplyDeny,
		"answer": task.ReplyAnswer, "approve": task.ReplyApprove, "revise": task.ReplyRevise, "cancel": task.ReplyCancel,
	}
	switch v := strings.ToLower(verb); {
	case v == "full":
		r, err := s.m.cfg.Steering.Request(ctx, id)
		if err != nil {
			return []chat.Reply{chat.Text(requestError(err))}
		}
		if r.ConversationID != s.c.id {
			return []chat.Reply{chat.Text(fmt.Sprintf("Request %d is not one of this conversation's.", id))}
		}
		return []chat.Reply{progress.RequestFull(r)}
	case v == "revise" && text == "":
		return []chat.Reply{chat.Text(fmt.Sprintf("What should change in the plan? Write it as your next message (or /req %d revise TEXT).", id))}
	case reply[v] != "":
		return s.answerRequest(ctx, it, id, task.RequestAnswer{Reply: reply[v], Text: text})
	}
	return []chat.Reply{chat.Text(usage)}
}

// answerRequest records the owner's answer; the engine sends it to the CLI.
func (s *session) answerRequest(ctx context.Context, it item, id int64, a task.RequestAnswer) []chat.Reply {
	if it.role != chat.Owner {
		return []chat.Reply{chat.Text("Only the owner can answer the coding CLI's requests.")}
	}
	a.By = it.userID
	r, err := s.m.cfg.Steering.Request(ctx, id)
	if err == nil && r.ConversationID != s.c.id {
		return []chat.Reply{chat.Text(fmt.Sprintf("Request %d is not one of this conversation's.", id))}
	}
	r, err = s.m.cfg.Steering.AnswerRequest(ctx, id, a)
	if err != nil {
		return []chat.Reply{chat.Text(requestError(err))}
	}
	what := fmt.Sprintf("task %s, request %d: %s", r.TaskID, r.ID, r.Summary)
	switch a.Reply {
	case task.ReplyAllow:
		return []chat.Reply{chat.Text("Allowed once (" + what + ").")}
	case task.ReplyAllowTask:
		return []chat.Reply{chat.Text(fmt.Sprintf("Allowed, and %s is allowed for the rest of task %s (%s).", r.Remember, r.TaskID, what))}
	case task.ReplyAllowAlways:
		return []chat.Reply{chat.Text(fmt.Sprintf("Allowed, and %s is always allowed in this workspace; /policy lists it (%s).", r.Remember, what))}
	case task.ReplyDeny:
		if a.Text != "" && r.NoReason {
			return []chat.Reply{chat.Text("Denied. The CLI is told no, but not your reason: its protocol (ACP) has no place for one (" + what + ").")}
		}
		if a.Text != "" {
			return []chat.Reply{chat.Text("Denied; the CLI is told: " + a.Text + " (" + what + ").")}
		}
		return []chat.Reply{chat.Text("Denied (" + what + ").")}
	case task.ReplyAnswer:
		return []chat.Reply{chat.Text(fmt.Sprintf("Passing your answer %q to task %s's CLI.", a.Text, r.TaskID))}
	case task.ReplyApprove:
		return []chat.Reply{chat.Text(fmt.Sprintf("Plan approved: task %s carries it out now.", r.TaskID))}
	case task.ReplyRevise:
		return []chat.Reply{chat.Text(fmt.Sprintf("Asking task %s's CLI for a new plan.", r.TaskID))}
	case task.ReplyCancel:
		return []chat.Reply{chat.Text(fmt.Sprintf("Plan cancelled: stopping task %s.", r.TaskID))}
	}
	return nil
}

// requestError is what the owner reads when an answer was refused.
func requestError(err error) string {
	switch {
	case errors.Is(err, task.ErrRequestClosed), errors.Is(err, task.ErrNotFound), errors.Is(err, task.ErrInvalid):
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "task: ")
		return "I can't take that answer: " + msg
	}
	return ErrorMessage(err)
}

// policyCommand is /policy and /policy remove ID (owner only).
func (s *session) policyCommand(ctx context.Context, it item, st instincts.State, args string) []chat.Reply {
	if st.Workspace == "" {
		return []chat.Reply{chat.Text("No workspace selected: /use WORKSPACE first, then /policy shows its policy.")}
	}
	verb, rest, _ := strings.Cut(args, " ")
	switch strings.ToLower(verb) {
	case "":
		text, err := s.m.cfg.Steering.PolicyText(ctx, st.Workspace, st.Autonomy)
		if err != nil {
			s.m.log.Error("policy", "conversation", s.c.id, "err", err)
			return []chat.Reply{chat.Text(ErrorMessage(err))}
		}
		return []chat.Reply{chat.Text(text)}
	case "remove", "rm", "delete":
		if it.role != chat.Owner {
			return []chat.Reply{chat.Text("Only the owner can remove a policy rule.")}
		}
		text, err := s.m.cfg.Steering.RemovePolicyRule(ctx, st.Workspace, strings.TrimSpace(rest), it.userID)
		if err != nil {
			return []chat.Reply{chat.Text(strings.TrimPrefix(err.Error(), "policy: "))}
		}
		return []chat.Reply{chat.Text(text)}
	}
	return []chat.Reply{chat.Text("Usage: /policy, or /policy remove ID")}
}

// planCommand is /plan GOAL: a task whose CLI plans first, read-only.
func (s *session) planCommand(ctx context.Context, it item, st instincts.State, goal string) []chat.Reply {
	switch {
	case goal == "":
		return []chat.Reply{chat.Text("Usage: /plan GOAL — the coding CLI reads the code and proposes a plan; you approve, revise or cancel it before anything changes.")}
	case st.Workspace == "":
		return []chat.Reply{chat.Text("No workspace selected: /use WORKSPACE first.")}
	case it.role != chat.Owner:
		return []chat.Reply{chat.Text("Only the owner can start a task.")}
	}
	t, err := s.m.cfg.Steering.CreatePlan(ctx, task.Request{ConversationID: s.c.id, Workspace: st.Workspace, Goal: goal})
	if err != nil {
		var busy *task.BusyError
		if errors.As(err, &busy) || errors.Is(err, task.ErrInvalid) {
			return []chat.Reply{chat.Text("I can't plan that: " + strings.TrimPrefix(err.Error(), "task: "))}
		}
		s.m.log.Error("plan", "conversation", s.c.id, "err", err)
		return []chat.Reply{chat.Text(ErrorMessage(err))}
	}
	return []chat.Reply{chat.Text(fmt.Sprintf("Task %s plans first on %s: its plan comes here to approve, revise or cancel.", t.ID, t.Workspace))}
}

// requestUpdate shows a request of a task's CLI, or its end, and keeps the
// conversation GUARDING while any request waits.
func (s *session) requestUpdate(ctx context.Context, u task.Update) {
	r := u.Request
	if r == nil {
		return
	}
	t := u.Task
	if u.Kind == task.Requested {
		s.m.send(ctx, s.c, progress.Request(t, *r, r.ExpiresAt.Sub(r.CreatedAt)))
		switch s.mode.Current() {
		case modes.Resting:
			s.fire(ctx, modes.Woke, "task "+t.ID+" asked")
			s.fire(ctx, modes.Guarded, fmt.Sprintf("task %s's request %d", t.ID, r.ID))
		case modes.Alert, modes.Working, modes.Waiting:
			s.fire(ctx, modes.Guarded, fmt.Sprintf("task %s's request %d", t.ID, r.ID))
		case modes.Guarding:
		}
		return
	}
	s.m.send(ctx, s.c, progress.RequestClosed(t, *r))
	if r.By == task.ByRestart {
		s.sendOnce(ctx, fmt.Sprintf("request-restart:%d", r.ID), chat.Text(fmt.Sprintf(
			"Fetch restarted while task %s's request %d (%s) waited for you, so it was denied and the CLI told so. It may ask again.", t.ID, r.ID, r.Summary)))
	}
	if s.mode.Current() != modes.Guarding {
		return
	}
	if p, err := s.m.cfg.Store.OpenPrompt(ctx, s.c.id); err == nil && p.Kind == store.Approval {
		return // Fetch's own approval keeps it guarding
	}
	if s.m.cfg.Steering == nil {
		return
	}
	if pending, err := s.m.cfg.Steering.PendingRequests(ctx, s.c.id); err != nil || len(pending) > 0 {
		return
	}
	if err := s.mode.Approve(ctx, "the coding CLI's requests were answered"); err != nil {
		s.m.log.Error("leave guarding", "conversation", s.c.id, "err", err)
	}
}
