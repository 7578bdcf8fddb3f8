package conversation

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// Follow-ups: /continue ID [TEXT] gives the owner's words to a task (to its
// CLI while it works, or as its next run on its branch), /retry ID runs a
// task that did not succeed again as it was asked, /withdraw N takes back
// a message that waits for a task's next run. The result message's
// Continue button sends "/continue ID"; the owner's next message is then
// the follow-up.

// continueWindow is how long "/continue ID" without words waits for them.
const continueWindow = 15 * time.Minute

// followTaskID matches a task id as commands take it.
var followTaskID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// followCommand takes /continue, /retry and /withdraw, and the words that
// a bare /continue waits for. It reports whether it took the message.
func (s *session) followCommand(ctx context.Context, it item) ([]chat.Reply, bool) {
	sg := s.m.cfg.Steering
	if sg == nil {
		return nil, false
	}
	text, name, args := command(it.text)
	switch name {
	case "/continue":
		s.taken = inInstinct
		id, words, _ := strings.Cut(args, " ")
		words = strings.TrimSpace(words)
		if !followTaskID.MatchString(id) {
			return []chat.Reply{chat.Text("Usage: /continue TASK_ID what to do next — the task continues on its own branch (a running task gets it at its next turn, or as its next run).")}, true
		}
		if words == "" {
			if r, ok := s.mayFollow(ctx, it, id); !ok {
				return r, true
			}
			s.continueTo, s.continueUntil = id, s.m.now().Add(continueWindow)
			return []chat.Reply{chat.Text(fmt.Sprintf("What should task %s do next? Write it as your next message; it continues on the task's branch.", id))}, true
		}
		s.continueTo = ""
		return s.tell(ctx, it, id, words), true
	case "/retry":
		s.taken = inInstinct
		if !followTaskID.MatchString(args) {
			return []chat.Reply{chat.Text("Usage: /retry TASK_ID — runs a task that failed or was stopped again, as it was asked, on its branch.")}, true
		}
		if r, ok := s.mayFollow(ctx, it, args); !ok {
			return r, true
		}
		if err := sg.Retry(ctx, args); err != nil {
			return []chat.Reply{chat.Text(followError(err))}, true
		}
		s.m.audit(ctx, s.c.id, it.userID, "task_retry", args)
		return []chat.Reply{chat.Text(fmt.Sprintf("🔁 Task %s runs again as it was asked, on its branch.", args))}, true
	case "/model":
		s.taken = inInstinct
		return []chat.Reply{chat.Text(s.modelCommand(ctx, it, args))}, true
	case progress.BudgetCommand:
		s.taken = inInstinct
		return s.budgetCommand(ctx, it, args), true
	case "/withdraw":
		s.taken = inInstinct
		id, err := strconv.ParseInt(strings.TrimPrefix(args, "#"), 10, 64)
		if err != nil || id <= 0 {
			return []chat.Reply{chat.Text("Usage: /withdraw MESSAGE_ID — takes back a message that waits for a task's next run.")}, true
		}
		if it.role != chat.Owner {
			return []chat.Reply{chat.Text("Only the owner can take messages back.")}, true
		}
		m, err := sg.Withdraw(ctx, id)
		if err != nil {
			return []chat.Reply{chat.Text(followError(err))}, true
		}
		s.m.audit(ctx, s.c.id, it.userID, "task_withdraw", fmt.Sprintf("%s #%d", m.TaskID, m.ID))
		return []chat.Reply{chat.Text(fmt.Sprintf("Took back your message to task %s: %q. It will not be sent.", m.TaskID, clipText(m.Text, 200)))}, true
	}
	if s.continueTo == "" || strings.HasPrefix(text, "/") || text == "" {
		return nil, false
	}
	id := s.continueTo
	s.continueTo = ""
	if s.m.now().After(s.continueUntil) {
		return nil, false
	}
	s.taken = inPrompt
	return s.tell(ctx, it, id, text), true
}

// budgetCommand is /budget ID raise [USD] and /budget ID stop (owner
// only), the buttons of a task paused at its budget: raise its cap and let
// it go on, or stop it there. The task's question is closed.
func (s *session) budgetCommand(ctx context.Context, it item, args string) []chat.Reply {
	const usage = "Usage: /budget TASK_ID raise [USD] — raises the cap of a task that waits at its budget and lets it go on; /budget TASK_ID stop — stops it there."
	f := strings.Fields(args)
	if len(f) < 2 || len(f) > 3 || !followTaskID.MatchString(f[0]) {
		return []chat.Reply{chat.Text(usage)}
	}
	if it.role != chat.Owner {
		return []chat.Reply{chat.Text("Only the owner can raise a task's budget or stop it.")}
	}
	if r, ok := s.mayFollow(ctx, it, f[0]); !ok {
		return r
	}
	id := f[0]
	switch verb := strings.ToLower(f[1]); {
	case verb == "raise":
		var usd float64
		if len(f) == 3 {
			v, err := strconv.ParseFloat(strings.TrimPrefix(f[2], "$"), 64)
			if err != nil || v <= 0 {
				return []chat.Reply{chat.Text(fmt.Sprintf("%q is not an amount of dollars. %s", f[2], usage))}
			}
			usd = v
		}
		t, err := s.m.cfg.Steering.RaiseBudget(ctx, id, usd, it.userID)
		if err != nil {
			return []chat.Reply{chat.Text(followError(err))}
		}
		s.closeTaskPrompt(ctx, id, "raise")
		s.m.audit(ctx, s.c.id, it.userID, "task_budget_raise", fmt.Sprintf("%s $%.2f", id, t.BudgetUSD))
		return []chat.Reply{chat.Text(fmt.Sprintf("💰 Task %s's cap is $%.2f now; it goes on where it stopped, on its branch.", id, t.BudgetUSD))}
	case verb == "stop" && len(f) == 2:
		if _, err := s.m.cfg.Steering.StopAtBudget(ctx, id, it.userID); err != nil {
			return []chat.Reply{chat.Text(followError(err))}
		}
		s.closeTaskPrompt(ctx, id, "stop")
		s.m.audit(ctx, s.c.id, it.userID, "task_budget_stop", id)
		return []chat.Reply{chat.Text(fmt.Sprintf("Task %s stops at its budget; its work so far stays on its branch.", id))}
	}
	return []chat.Reply{chat.Text(usage)}
}

// closeTaskPrompt closes task id's question when it is the open prompt,
// as an answer would, and moves the mode on.
func (s *session) closeTaskPrompt(ctx context.Context, id, answer string) {
	p, err := s.m.cfg.Store.OpenPrompt(ctx, s.c.id)
	if err != nil || progress.PromptTask(p) != id {
		return
	}
	if err := s.m.cfg.Store.ResolvePrompt(ctx, p.ID, answer); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.m.log.Error("close a task's question", "conversation", s.c.id, "task", id, "err", err)
		return
	}
	if s.mode.Current() == modes.Waiting {
		s.fire(ctx, modes.Answered, "owner answered task "+id+" at its budget")
	}
}

// mayFollow checks that the sender may give task id follow-ups: the owner
// any task, anyone else only their conversation's.
func (s *session) mayFollow(ctx context.Context, it item, id string) ([]chat.Reply, bool) {
	t, err := s.m.cfg.Steering.Get(ctx, id)
	if err != nil {
		return []chat.Reply{chat.Text(followError(err))}, false
	}
	if it.role != chat.Owner && t.ConversationID != s.c.id {
		return []chat.Reply{chat.Text(fmt.Sprintf("Task %s is not one of this conversation's.", id))}, false
	}
	return nil, true
}

// tell gives text to task id and says what became of it.
func (s *session) tell(ctx context.Context, it item, id, text string) []chat.Reply {
	if r, ok := s.mayFollow(ctx, it, id); !ok {
		return r
	}
	atts, refused := s.attachments(ctx, it)
	if refused != nil {
		return refused
	}
	told, err := s.m.cfg.Steering.Tell(ctx, id, text, it.userID, atts...)
	if err != nil {
		return []chat.Reply{chat.Text(followError(err))}
	}
	s.m.audit(ctx, s.c.id, it.userID, "task_message", id+" "+string(told.How))
	return []chat.Reply{progress.Told(told)}
}

// followError is a follow-up's failure as the owner reads it.
func followError(err error) string {
	switch {
	case errors.Is(err, task.ErrNotFound), errors.Is(err, task.ErrInvalid), errors.Is(err, task.ErrState),
		errors.Is(err, task.ErrBusy), errors.Is(err, task.ErrNotQueued):
		return "I can't do that: " + strings.TrimPrefix(err.Error(), "task: ")
	}
	return ErrorMessage(err)
}

// clipText cuts s to n characters.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// recentWindow is how long after a task of the conversation ended a vague
// message ("fix it", "that broke the build") is still taken to be about it.
const recentWindow = time.Hour

// recentTask tells whether a task of the conversation ended within
// recentWindow.
func (s *session) recentTask(ctx context.Context) bool {
	if s.m.cfg.Tasks == nil {
		return false
	}
	ts, err := s.m.cfg.Tasks.List(ctx, task.Filter{ConversationID: s.c.id, Limit: 1})
	if err != nil || len(ts) == 0 {
		return false
	}
	t := ts[0]
	return t.State.Terminal() && t.Mode == task.Work && s.m.now().Sub(t.EndedAt) < recentWindow
}

// attachments takes the message's files into Fetch's keeping; when they
// cannot be (too big, a type not taken, a secret inside, a failed
// download), the replies say why and nothing goes on.
func (s *session) attachments(ctx context.Context, it item) ([]task.Attachment, []chat.Reply) {
	if len(it.attachments) == 0 {
		return nil, nil
	}
	if s.m.cfg.Attachments == nil {
		return nil, []chat.Reply{chat.Text("I can't take files here; describe what's in them instead.")}
	}
	atts, err := s.m.cfg.Attachments.Fetch(ctx, it.attachments)
	if err != nil {
		s.m.log.Warn("attachments refused", "conversation", s.c.id, "err", err)
		return nil, []chat.Reply{chat.Text("I didn't take your files, and nothing was sent on: " + attachError(err))}
	}
	return atts, nil
}

// attachError is a refused attachment as the owner reads it.
func attachError(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, "attachment refused: "); ok {
		return after
	}
	return ErrorMessage(err)
}

// modelCommand is /model [NAME|default]: the coding CLI's model the
// conversation's tasks use; a task whose CLI does not take it is refused
// with the names it takes.
func (s *session) modelCommand(ctx context.Context, it item, args string) string {
	c, err := s.m.cfg.Store.Conversation(ctx, s.c.id)
	if err != nil {
		return ErrorMessage(err)
	}
	name := strings.TrimSpace(args)
	switch {
	case name == "" && c.Model == "":
		return "Tasks here use each coding CLI's default model. /model NAME picks one (claude: sonnet, opus, haiku; codex: gpt-…), /model default goes back."
	case name == "":
		return fmt.Sprintf("Tasks here use the model %s. /model default goes back to each CLI's own.", c.Model)
	case it.role != chat.Owner:
		return "Only the owner can pick the model."
	case strings.EqualFold(name, "default"):
		name = ""
	case len(strings.Fields(name)) != 1 || harness.CheckModel("", name) != nil:
		return fmt.Sprintf("%q is not a model name. Usage: /model NAME (such as opus or gpt-5.5), /model default.", name)
	}
	if err := s.m.cfg.Store.SetModel(ctx, s.c.id, name); err != nil {
		return ErrorMessage(err)
	}
	if name == "" {
		s.m.audit(ctx, s.c.id, it.userID, "model", "default")
		return "Tasks here use each coding CLI's default model again."
	}
	s.m.audit(ctx, s.c.id, it.userID, "model", name)
	return fmt.Sprintf("Tasks here use the model %s from now on (a task whose CLI does not take it is refused with the names it takes).", name)
}

// command is text trimmed, its first word lower-cased (a command's name)
// and the rest trimmed.
func command(text string) (trimmed, name, args string) {
	trimmed = strings.TrimSpace(text)
	name, args, _ = strings.Cut(trimmed, " ")
	return trimmed, strings.ToLower(name), strings.TrimSpace(args)
}
