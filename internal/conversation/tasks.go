package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// notes handles what was queued for the conversation from outside: task
// updates and a stop's wake-up. It runs on the conversation's goroutine,
// which alone changes the mode and decides what to send.
func (s *session) notes(ctx context.Context) {
	for _, n := range s.c.takeNotes() {
		switch {
		case n.update != nil:
			s.taskUpdate(ctx, *n.update)
		case n.wake != "" && s.mode.Current() == modes.Resting: // or another message woke it first
			s.fire(ctx, modes.Woke, n.wake)
		}
	}
}

func (s *session) fire(ctx context.Context, e modes.Event, reason string) {
	if err := s.mode.Fire(ctx, e, reason); err != nil {
		s.m.log.Error("mode event", "conversation", s.c.id, "event", e, "err", err)
	}
}

// taskUpdate decides what an update of one of the conversation's tasks
// shows and how it moves the mode.
func (s *session) taskUpdate(ctx context.Context, u task.Update) {
	t := u.Task
	switch u.Kind {
	case task.Started:
		s.m.send(ctx, s.c, s.tracker.Started(t, u.NearLimit))
		if s.mode.Current() == modes.Resting {
			s.fire(ctx, modes.Woke, "task "+t.ID+" started")
		}
		if s.mode.Current() == modes.Alert {
			s.fire(ctx, modes.TaskStarted, "task "+t.ID+" started")
		}
	case task.Reattached:
		if u.Engine != "" && !u.Recovered {
			s.m.send(ctx, s.c, s.tracker.Reconnected(t, u.Engine)...)
		} else {
			s.m.send(ctx, s.c, s.tracker.Reattached(t)...)
		}
		if s.mode.Current() == modes.Alert {
			s.fire(ctx, modes.TaskStarted, "task "+t.ID+" followed again after a restart")
		}
	case task.Unreachable:
		s.m.send(ctx, s.c, progress.Unreachable(t, u.Engine))
	case task.Progress:
		if u.Event == nil {
			return
		}
		if r, ok := s.tracker.Step(t, *u.Event, s.m.now()); ok {
			s.m.send(ctx, s.c, r)
		}
	case task.Requested, task.RequestClosed:
		s.requestUpdate(ctx, u)
	case task.Asked:
		s.taskAsked(ctx, t)
	case task.Ended:
		s.ended(ctx, t)
		if t.PR.Number != 0 {
			s.shipped(ctx, t, "")
		}
	case task.Shipped:
		s.shipped(ctx, t, u.Err)
	case task.Requeued:
		if u.Message != nil {
			s.sendOnce(ctx, fmt.Sprintf("task-requeued:%s:%d", t.ID, u.Message.ID), progress.Requeued(t, *u.Message))
		}
	case task.Reviewed:
		s.sendOnce(ctx, fmt.Sprintf("task-pr-review:%s:%d:%d", t.ID, t.PR.Number, t.PRReviews), progress.Reviewed(t, u.Review))
	case task.PRChanged:
		key := fmt.Sprintf("task-pr-state:%s:%d:%s", t.ID, t.PR.Number, t.PR.State)
		if u.Err != "" {
			key = ""
		}
		s.sendOnce(ctx, key, progress.PRChanged(t, u.Err))
	}
}

// shipped tells of a task's pull request once (keyed by it), and of every
// failure to ship.
func (s *session) shipped(ctx context.Context, t task.Task, errText string) {
	key := fmt.Sprintf("task-pr:%s:%d", t.ID, t.PR.Number)
	if t.ChecksFailed() && !t.PR.Draft {
		// A draft the owner shipped anyway is told again.
		key += ":anyway"
	}
	if t.PR.Number == 0 || errText != "" {
		key = ""
	}
	s.sendOnce(ctx, key, progress.Shipped(t, errText))
}

// sendOnce queues a message that is sent once under key (a task's end
// told again after a restart goes out once); with no key it is sent like
// any reply.
func (s *session) sendOnce(ctx context.Context, key string, r chat.Reply) {
	if key == "" {
		s.m.send(ctx, s.c, r)
		return
	}
	if _, err := s.m.out.add(ctx, s.c.id, s.c.channel, key, outNotice, r); err != nil {
		s.m.log.Error("queue a message", "conversation", s.c.id, "key", key, "err", err)
	}
}

// taskAsked opens a task's question as the conversation's prompt, moves it to
// WAITING and shows the question. When another prompt is open, the
// question is shown with the other way to answer it.
func (s *session) taskAsked(ctx context.Context, t task.Task) {
	_, err := s.m.cfg.Store.AddPrompt(ctx, progress.QuestionPrompt(t))
	queued := errors.Is(err, store.ErrConflict)
	if err != nil && !queued {
		s.m.log.Error("open a task's question", "conversation", s.c.id, "task", t.ID, "err", err)
		queued = true
	}
	if !queued {
		switch s.mode.Current() {
		case modes.Resting:
			s.fire(ctx, modes.Woke, "task "+t.ID+" asked")
			s.fire(ctx, modes.Asked, "task "+t.ID+" asked")
		case modes.Alert, modes.Working:
			s.fire(ctx, modes.Asked, "task "+t.ID+" asked")
		case modes.Waiting, modes.Guarding:
		}
	}
	s.m.send(ctx, s.c, s.tracker.Waiting(t), progress.Question(t, queued))
}

// ended closes the question the task left open, moves the conversation
// back to ALERT when nothing else of it runs or waits, shows the result
// as a new message, and keeps it in the agent's history.
func (s *session) ended(ctx context.Context, t task.Task) {
	open := false
	if p, err := s.m.cfg.Store.OpenPrompt(ctx, s.c.id); err == nil {
		if progress.PromptTask(p) == t.ID {
			if err := s.m.cfg.Store.ResolvePrompt(ctx, p.ID, string(t.State)); err != nil && !errors.Is(err, store.ErrNotFound) {
				s.m.log.Error("close a task's question", "conversation", s.c.id, "task", t.ID, "err", err)
			}
		} else {
			open = true
		}
	}
	// The mode moves first, so that whoever reads the result finds the
	// conversation where the result leaves it.
	if !open && (s.mode.Current() == modes.Working || s.mode.Current() == modes.Waiting) {
		active, err := s.m.cfg.Tasks.List(ctx, task.Filter{ConversationID: s.c.id, States: []task.State{task.Running, task.WaitingInput}})
		if err != nil {
			s.m.log.Error("active tasks", "conversation", s.c.id, "err", err)
		} else if len(active) == 0 {
			s.fire(ctx, modes.TaskEnded, fmt.Sprintf("task %s %s", t.ID, t.State))
		}
	}
	// The result is keyed by the task's run: an end told again (the
	// engine retells recent ends at start, in case a crash lost the
	// message) goes out once, and a follow-up run (a resolve, a review)
	// has an end of its own.
	replies := s.tracker.Ended(t)
	status, result := replies[0], replies[1]
	queued, err := s.m.out.add(ctx, s.c.id, s.c.channel, fmt.Sprintf("task-ended:%s:%d", t.ID, t.Runs), outResult, result)
	if err != nil {
		s.m.log.Error("queue a task's result", "conversation", s.c.id, "task", t.ID, "err", err)
		return
	}
	if len(queued) == 0 {
		return // told before
	}
	s.m.send(ctx, s.c, status)
	if s.m.cfg.Memory != nil {
		note := result.Text
		if err := s.m.cfg.Memory.Remember(ctx, s.c.id, note); err != nil {
			s.m.log.Error("keep a task's result in the history", "conversation", s.c.id, "task", t.ID, "err", err)
		}
	}
}

// resume answers a task's question: the engine resumes the task with the
// answer; its progress arrives as updates.
func (s *session) resume(ctx context.Context, id, answer string) []chat.Reply {
	if err := s.m.cfg.Tasks.Respond(ctx, id, answer); err != nil {
		if errors.Is(err, task.ErrState) || errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrInvalid) {
			return []chat.Reply{chat.Text(fmt.Sprintf("Task %s can't take that answer: %s", id, err))}
		}
		s.m.log.Error("resume a task", "conversation", s.c.id, "task", id, "err", err)
		return []chat.Reply{chat.Text(ErrorMessage(err))}
	}
	return []chat.Reply{chat.Text(fmt.Sprintf("Resuming task %s with your answer.", id))}
}

// expireAtStart closes the prompts a previous process left open: nothing
// waits on them any more, and a "yes" after a restart must approve
// nothing. Each conversation is told once, in one message.
func (m *Manager) expireAtStart(ctx context.Context) error {
	ps, err := m.cfg.Store.OpenPrompts(ctx)
	if err != nil {
		return err
	}
	var order []string
	byConv := map[string][]store.Prompt{}
	for _, p := range ps {
		if _, ok := byConv[p.ConversationID]; !ok {
			order = append(order, p.ConversationID)
		}
		byConv[p.ConversationID] = append(byConv[p.ConversationID], p)
	}
	for _, id := range order {
		conv, err := m.cfg.Store.Conversation(ctx, id)
		if err != nil {
			return err
		}
		prompts := byConv[id]
		// The notice first, keyed by the prompts, so that a crash between
		// the two repeats neither.
		key := fmt.Sprintf("expired-at-start:%d", prompts[len(prompts)-1].ID)
		if _, err := m.out.add(ctx, conv.ID, conv.Channel, key, outNotice, chat.Text(expiredNotice(prompts))); err != nil {
			return err
		}
		for _, p := range prompts {
			if err := m.cfg.Store.ResolvePrompt(ctx, p.ID, "expired at restart"); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			m.audit(ctx, id, "fetch", "prompt_expired", "at restart: "+p.Body)
		}
		m.log.Info("prompts left open by the previous run expired", "conversation", id, "prompts", len(prompts))
	}
	return nil
}

// expiredNotice tells the owner what expired with a restart.
func expiredNotice(ps []store.Prompt) string {
	var b strings.Builder
	b.WriteString("Fetch restarted, so what I was waiting on expired:")
	for _, p := range ps {
		switch id := progress.PromptTask(p); {
		case p.Kind == store.Approval:
			fmt.Fprintf(&b, "\n• the approval of: %s — nothing was done; ask again if you still want it.", clipLine(p.Body))
		case id != "":
			fmt.Fprintf(&b, "\n• task %s's question: %s — the task waits; answer with: fetch task answer %s \"…\", or /stop to cancel it.", id, clipLine(p.Body), id)
		default:
			fmt.Fprintf(&b, "\n• my question: %s — ask again if it still matters.", clipLine(p.Body))
		}
	}
	return b.String()
}

func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}
