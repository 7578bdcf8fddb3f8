package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// run is a conversation's goroutine: it loads (and after a restart
// reconciles) the mode, then handles the mailbox in order until ctx ends.
func (m *Manager) run(ctx context.Context, c *conv) {
	defer close(c.stopped)
	log := m.log.With("conversation", c.id)
	machine, err := modes.Load(ctx, m.cfg.Store, c.id, m.now)
	if err != nil {
		log.Error("load mode; conversation not started", "err", err)
		return
	}
	if changed, err := machine.Reconcile(ctx, m.live(ctx, c.id)); err != nil {
		log.Error("reconcile mode", "err", err)
	} else if changed {
		log.Info("mode reconciled after restart", "mode", machine.Current(), "reason", machine.Reason())
	}
	s := &session{m: m, c: c, mode: machine, tracker: progress.NewTracker(m.cfg.EditEvery, m.cfg.Scrub).Linking(m.cfg.TaskLink)}

	var idle <-chan time.Time
	var timer *time.Timer
	if m.cfg.IdleAfter > 0 {
		timer = time.NewTimer(m.cfg.IdleAfter)
		defer timer.Stop()
		idle = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			// What happened to tasks is still told (a closing engine's
			// stopped runs), within a bound.
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeNotes)
			s.notes(cleanup)
			cancel()
			// Drain what is queued so that Idle waiters return; the
			// messages stay unhandled in the store for the next start.
			for {
				if _, ok := c.next(); !ok {
					return
				}
				c.donePending()
			}
		case <-c.ready:
			s.notes(ctx)
		case <-c.mail:
			// One message at a time, so that notes and a close are seen
			// between messages.
			it, ok := c.next()
			if !ok {
				continue
			}
			s.handle(ctx, it)
			c.donePending()
			c.more()
			if timer != nil {
				timer.Reset(m.cfg.IdleAfter)
			}
		case <-idle:
			if machine.Current() == modes.Alert {
				reason := fmt.Sprintf("idle for %s", m.cfg.IdleAfter)
				if err := machine.Fire(ctx, modes.IdleTimeout, reason); err != nil {
					log.Error("rest", "err", err)
				}
			}
			timer.Reset(m.cfg.IdleAfter)
		}
	}
}

// closeNotes bounds the handling of task updates when the Manager closes.
const closeNotes = 5 * time.Second

// live is what is really going on in a conversation, for reconciling its
// mode.
func (m *Manager) live(ctx context.Context, conversationID string) modes.Live {
	var l modes.Live
	if t, err := m.running(ctx, conversationID); err == nil && t != nil {
		l.TaskRunning = true
	}
	if p, err := m.cfg.Store.OpenPrompt(ctx, conversationID); err == nil && !p.Expired(m.now()) {
		switch p.Kind {
		case store.Approval:
			l.ApprovalOpen = true
		case store.Question:
			l.QuestionOpen = true
		}
	}
	return l
}

// session is a conversation's goroutine-owned state.
type session struct {
	m    *Manager
	c    *conv
	mode *modes.Machine
	// tracker decides what the status messages of the conversation's
	// tasks show.
	tracker *progress.Tracker
	// asked tells whether Fetch's last reply was a question, for
	// classifying a short confirmation.
	asked bool
	// taken is how respond took the message being handled (an in* kind
	// or an intent class), for the metrics.
	taken string
	// continueTo is the task a bare "/continue ID" (the Continue button)
	// gives the next message to, until continueUntil.
	continueTo    string
	continueUntil time.Time
}

// handle is one mailbox item, start to finish.
func (s *session) handle(ctx context.Context, it item) {
	log := s.m.log.With("conversation", s.c.id)
	turn, cancel := context.WithCancelCause(ctx)
	s.c.setTurn(cancel)
	replies, fx := s.respond(turn, it)
	s.c.setTurn(nil)
	stopped := errors.Is(context.Cause(turn), ErrStopped)
	cancel(nil)
	if stopped {
		// The stop already answered; what the cancelled turn produced is
		// dropped, and so is a command's change.
		replies, fx = nil, nil
	}
	if ctx.Err() != nil {
		// Shutting down: leave the message unhandled for the next start.
		return
	}
	if fx != nil {
		// A command's change commits with the message it answers.
		var err error
		if replies, err = s.commit(ctx, it, *fx); err != nil {
			if errors.Is(err, store.ErrConflict) {
				log.Debug("command already handled", "message", it.msgID)
			} else {
				log.Error("complete command", "message", it.msgID, "err", err)
			}
			return
		}
		s.m.out.queue(s.c.id, s.c.channel, outReply, replies)
	} else if err := s.m.complete(ctx, s.c, it.msgID, replies); err != nil {
		log.Error("complete message", "message", it.msgID, "err", err)
		return
	}
	s.m.countIn(s.taken)
	if s.taken == inInstinct {
		s.m.instinctReplied(it.received)
	}
	if len(replies) > 0 {
		s.asked = strings.HasSuffix(strings.TrimSpace(replies[len(replies)-1].Text), "?")
	}
}

// respond decides what a message means and answers it: instincts first,
// then what the mode makes of it, then intent and the agent. A command
// that changes something returns its effect instead of replies (commit
// makes the change and stores the replies with the message).
func (s *session) respond(ctx context.Context, it item) ([]chat.Reply, *effect) {
	if s.mode.Current() == modes.Resting {
		if err := s.mode.Fire(ctx, modes.Woke, "message from "+it.userID); err != nil {
			s.m.log.Error("wake", "conversation", s.c.id, "err", err)
		}
	}
	st, prompt := s.state(ctx, it)

	s.taken = inInstinct
	if replies, ok := s.steerMessage(ctx, it, st, prompt); ok {
		return replies, nil
	}
	if !s.m.instincts.IsStop(it.text) {
		if replies, ok := s.followCommand(ctx, it); ok {
			return replies, nil
		}
	}
	if r, ok := s.m.instincts.Match(it.text, st); ok {
		if fx, ok := s.effect(it, r); ok {
			return nil, &fx
		}
		return s.apply(ctx, it, r, prompt), nil
	}
	return s.understand(ctx, it, st, prompt), nil
}

// understand answers what no instinct took: an open prompt's answer, or
// what intent and the agent make of it.
func (s *session) understand(ctx context.Context, it item, st instincts.State, prompt *store.Prompt) []chat.Reply {
	if prompt != nil && (prompt.Kind == store.Question || prompt.Kind == store.Approval) {
		s.taken = inPrompt
	}
	switch {
	case prompt != nil && prompt.Kind == store.Question:
		// Whatever the owner writes while Fetch waits is the answer.
		more, err := s.answer(ctx, it, *prompt, it.text)
		if err != nil {
			return []chat.Reply{chat.Text(ErrorMessage(err))}
		}
		return append([]chat.Reply{chat.Text("Thanks, passing that on.")}, more...)
	case prompt != nil && prompt.Kind == store.Approval:
		return []chat.Reply{approvalReminder(prompt.Body)}
	}

	// A short message while a task runs ("fix it", "try again") is about
	// that task: the agent, which sees it, can act on it.
	// So is one soon after a task of the conversation ended ("also add a
	// test", "that broke the build"): a follow-up on its branch.
	onTask := st.Task != nil || s.recentTask(ctx)
	res := s.m.classifier.Classify(it.text, intent.Context{AwaitingConfirmation: s.asked, TaskRunning: onTask && s.m.cfg.Agent != nil})
	s.taken = string(res.Kind)
	if res.Kind == intent.Clarify {
		return []chat.Reply{chat.Text(clarifyReply)}
	}
	if s.m.cfg.Agent == nil {
		return []chat.Reply{chat.Text(s.m.cfg.NoAgent)}
	}
	atts, refused := s.attachments(ctx, it)
	if refused != nil {
		return refused
	}
	replies, err := s.m.cfg.Agent.Respond(ctx, Turn{
		ConversationID: s.c.id,
		UserID:         it.userID,
		Role:           it.role,
		Text:           it.text,
		Intent:         res,
		Workspace:      st.Workspace,
		Attachments:    atts,
		Notify: func(ctx context.Context, r chat.Reply) error {
			_, err := s.m.out.add(ctx, s.c.id, s.c.channel, "", outProgress, r)
			return err
		},
	})
	s.followPrompt(context.WithoutCancel(ctx))
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrStopped) {
			return nil
		}
		s.m.log.Error("agent", "conversation", s.c.id, "intent", res.Kind, "rule", res.Rule, "err", err)
		return []chat.Reply{chat.Text(ErrorMessage(err))}
	}
	return replies
}

// approvalReminder answers anything but yes or no while an approval is
// open, offering the answers as buttons.
func approvalReminder(body string) chat.Reply {
	return chat.Reply{
		Text: "I'm waiting for your approval of: " + body + "\nAnswer yes or no (or /stop).",
		Actions: []chat.Action{
			{Label: "Approve", Send: "yes", Style: chat.Primary},
			{Label: "Deny", Send: "no", Style: chat.Danger},
		},
	}
}

const clarifyReply = "I'm not sure what to do yet. Tell me what should change and where — for example \"fix the failing test in parser_test.go\" or \"add a /health endpoint to the API\"."

// state is the snapshot instincts decide on, and the open prompt. An
// expired prompt is closed here.
func (s *session) state(ctx context.Context, it item) (instincts.State, *store.Prompt) {
	now := s.m.now()
	st := instincts.State{
		Now:       now,
		Channel:   s.c.channel,
		UserID:    it.userID,
		Role:      string(it.role),
		Mode:      string(s.mode.Current()),
		ModeEmoji: s.mode.Current().Emoji(),
		ModeSince: s.mode.Since(),
		Location:  s.m.cfg.Location,
		LLM:       s.m.cfg.Agent != nil,
	}
	if conv, err := s.m.cfg.Store.Conversation(ctx, s.c.id); err == nil {
		st.Workspace = conv.Workspace
		st.Autonomy = instincts.Autonomy(conv.Autonomy)
	} else {
		s.m.log.Error("load conversation", "conversation", s.c.id, "err", err)
	}
	if s.m.cfg.Spend != nil {
		spend, err := s.m.cfg.Spend(ctx)
		if err != nil {
			s.m.log.Error("spend", "conversation", s.c.id, "err", err)
		}
		st.Spend = spend
	}
	if isStatus(it.text) {
		if s.m.cfg.Shipping != nil && st.Workspace != "" {
			st.Shipping = s.m.cfg.Shipping.Describe(ctx, st.Workspace)
		}
		if s.m.cfg.Engines != nil {
			st.Engines = s.m.cfg.Engines(ctx)
		}
		if s.m.cfg.Hosts != nil {
			st.WayOut = s.m.cfg.Hosts.Describe(ctx, st.Workspace)
		}
		if s.m.cfg.Limits != nil {
			st.Limits = s.m.cfg.Limits(ctx)
		}
		if s.m.cfg.DaySpend != nil {
			if ds, err := s.m.cfg.DaySpend(ctx); err != nil {
				s.m.log.Error("day spend", "conversation", s.c.id, "err", err)
			} else {
				st.DaySpend = ds
			}
		}
	}
	t, err := s.m.running(ctx, s.c.id)
	if err != nil {
		s.m.log.Error("running task", "conversation", s.c.id, "err", err)
	}
	st.Task = t
	p, err := s.m.cfg.Store.OpenPrompt(ctx, s.c.id)
	if err != nil {
		return st, nil
	}
	if p.Expired(now) {
		s.expire(ctx, p)
		return st, nil
	}
	st.Prompt = &instincts.Prompt{Kind: instincts.PromptKind(p.Kind), Body: p.Body}
	return st, &p
}

// expire closes a prompt nobody answered in time; an expired approval is a
// denial.
func (s *session) expire(ctx context.Context, p store.Prompt) {
	if err := s.m.cfg.Store.ResolvePrompt(ctx, p.ID, "expired"); err != nil {
		s.m.log.Error("expire prompt", "conversation", s.c.id, "err", err)
		return
	}
	if p.Kind == store.Approval && s.mode.Current() == modes.Guarding {
		if err := s.mode.Fire(ctx, modes.Denied, "approval expired"); err != nil {
			s.m.log.Error("expire approval", "conversation", s.c.id, "err", err)
		}
	}
	s.m.audit(ctx, s.c.id, "fetch", "prompt_expired", p.Body)
}

// apply carries out an instinct's effect and returns its replies.
func (s *session) apply(ctx context.Context, it item, r instincts.Response, prompt *store.Prompt) []chat.Reply {
	switch r.Effect {
	case instincts.None:
	case instincts.Stop:
		// A stop replayed from the store after a restart: nothing of the
		// old process is in flight, but tasks may be.
		if err := s.m.stopTasks(ctx, s.c.id); err != nil {
			return []chat.Reply{chat.Text("I could not stop everything: " + ErrorMessage(err))}
		}
	case instincts.Clear:
		if err := s.m.cfg.Store.ClearHistory(ctx, s.c.id); err != nil {
			s.m.log.Error("clear history", "conversation", s.c.id, "err", err)
			return []chat.Reply{chat.Text(ErrorMessage(err))}
		}
		s.asked = false
		s.m.audit(ctx, s.c.id, it.userID, "clear", "")
	case instincts.Answer:
		more, err := s.answer(ctx, it, *prompt, r.Answer)
		if err != nil {
			return []chat.Reply{chat.Text(ErrorMessage(err))}
		}
		return append([]chat.Reply{chat.Text(r.Reply)}, more...)
	case instincts.PR:
		return []chat.Reply{chat.Text(s.prAction(ctx, r))}
	case instincts.SetAutonomy, instincts.Remind, instincts.Schedule, instincts.CronList, instincts.CronRemove, instincts.CronPause, instincts.CronResume,
		instincts.WatchOn, instincts.WatchOff, instincts.ShipMode, instincts.UseWorkspace, instincts.AllowAdd, instincts.AllowRemove, instincts.AllowList,
		instincts.HostsList, instincts.HostsAdd, instincts.HostsRemove, instincts.AutoMergeShow, instincts.AutoMergeSet, instincts.Checks:
		// Effects: see session.effect.
	}
	return []chat.Reply{chat.Text(r.Reply)}
}

// answer resolves the open prompt with the owner's answer, moves the mode
// on, and lets the Resolver continue; it returns what the Resolver
// replied. An error means the prompt was left open.
func (s *session) answer(ctx context.Context, it item, p store.Prompt, answer string) ([]chat.Reply, error) {
	if err := s.m.cfg.Store.ResolvePrompt(ctx, p.ID, answer); err != nil {
		s.m.log.Error("resolve prompt", "conversation", s.c.id, "err", err)
		return nil, err
	}
	s.m.audit(ctx, s.c.id, it.userID, "answer_"+string(p.Kind), answer)
	var err error
	switch {
	case p.Kind == store.Question && s.mode.Current() == modes.Waiting:
		err = s.mode.Fire(ctx, modes.Answered, "owner answered")
	case p.Kind == store.Approval && s.mode.Current() == modes.Guarding && answer == "yes":
		err = s.mode.Approve(ctx, "owner approved")
	case p.Kind == store.Approval && s.mode.Current() == modes.Guarding:
		err = s.mode.Fire(ctx, modes.Denied, "owner denied")
	}
	if err != nil {
		s.m.log.Error("mode after answer", "conversation", s.c.id, "err", err)
	}
	var replies []chat.Reply
	if id := progress.PromptTask(p); id != "" {
		replies = s.resume(ctx, id, answer)
	} else if s.m.cfg.Resolver != nil {
		more, err := s.m.cfg.Resolver.Resolved(ctx, p, answer, it.role)
		if err != nil {
			s.m.log.Error("resolve", "conversation", s.c.id, "err", err)
			more = []chat.Reply{chat.Text(ErrorMessage(err))}
		}
		replies = more
	}
	s.followPrompt(ctx)
	s.settle(ctx)
	return replies, nil
}

// followPrompt moves the mode to what a prompt the agent opened calls
// for: GUARDING for an approval, WAITING for a question.
func (s *session) followPrompt(ctx context.Context) {
	p, err := s.m.cfg.Store.OpenPrompt(ctx, s.c.id)
	if err != nil {
		return // none open (or unreadable: the next message looks again)
	}
	cur := s.mode.Current()
	switch {
	case p.Kind == store.Approval && (cur == modes.Alert || cur == modes.Working || cur == modes.Waiting):
		s.fire(ctx, modes.Guarded, p.Body)
	case p.Kind == store.Question && (cur == modes.Alert || cur == modes.Working):
		s.fire(ctx, modes.Asked, p.Body)
	}
}

// settle returns the conversation to ALERT once an answer's work is over:
// an answered question moves to WORKING, which only a running task keeps.
func (s *session) settle(ctx context.Context) {
	if s.mode.Current() != modes.Working {
		return
	}
	if t, err := s.m.running(ctx, s.c.id); err != nil || t != nil {
		return
	}
	if err := s.mode.Fire(ctx, modes.Settled, "answer handled; nothing running"); err != nil {
		s.m.log.Error("settle", "conversation", s.c.id, "err", err)
	}
}

// isStatus tells a /status command: only it shows the shipping settings,
// which other messages need not read.
func isStatus(text string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	return strings.EqualFold(name, "/status")
}

// prAction starts /pr ship|merge|close ID; the outcome arrives later as a
// task update.
func (s *session) prAction(ctx context.Context, r instincts.Response) string {
	if s.m.cfg.Tasks == nil {
		return "That is not available in this Fetch."
	}
	var err error
	switch r.PRAction {
	case "ship":
		err = s.m.cfg.Tasks.RequestShip(ctx, r.TaskID)
	default:
		err = s.m.cfg.Tasks.RequestPRAction(ctx, r.TaskID, task.PRAction(r.PRAction))
	}
	switch {
	case errors.Is(err, task.ErrNotFound):
		return fmt.Sprintf("There is no task %s.", r.TaskID)
	case errors.Is(err, task.ErrState), errors.Is(err, task.ErrInvalid):
		return fmt.Sprintf("I can't %s task %s: %s", r.PRAction, r.TaskID, err)
	case err != nil:
		s.m.log.Error("pull request action", "conversation", s.c.id, "task", r.TaskID, "action", r.PRAction, "err", err)
		return ErrorMessage(err)
	}
	return map[string]string{
		"ship":    fmt.Sprintf("Shipping task %s: pushing its branch and opening a pull request.", r.TaskID),
		"merge":   fmt.Sprintf("Merging the pull request of task %s.", r.TaskID),
		"close":   fmt.Sprintf("Closing the pull request of task %s.", r.TaskID),
		"resolve": fmt.Sprintf("Bringing the latest base into task %s's kennel and asking its coding CLI to rebase onto it.", r.TaskID),
		"review":  fmt.Sprintf("Sending the review of task %s's pull request to its coding CLI.", r.TaskID),
		"anyway":  fmt.Sprintf("Shipping task %s although a check failed: pushing its branch and opening its pull request, which is not merged on its own.", r.TaskID),
	}[r.PRAction]
}
