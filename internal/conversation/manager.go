package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/modes"
)

// mailboxSize bounds the messages queued for one conversation. When a
// mailbox is full, Receive waits (back-pressure on the channel); the
// message is already stored, so one given up on is handled after the next
// start.
const mailboxSize = 64

// Agent answers a message that no instinct took: the ReAct loop over the
// LLM. It runs on the conversation's goroutine; ctx is cancelled with
// ErrStopped when the owner stops the turn.
type Agent interface {
	Respond(ctx context.Context, t Turn) ([]chat.Reply, error)
}

// Turn is one message handed to the agent.
type Turn struct {
	ConversationID string
	UserID         string
	Role           chat.Role
	Text           string
	Intent         intent.Result
	Workspace      string
	// Mode is the conversation's mode machine. The agent may fire events
	// on it (it runs on the conversation's goroutine).
	Mode *modes.Machine
	// Notify sends a message to the conversation at once, before the
	// turn's replies (progress).
	Notify func(ctx context.Context, r chat.Reply) error
}

// Tasks is what the conversation needs of the task engine.
type Tasks interface {
	// Running returns the conversation's running task, nil when none.
	Running(ctx context.Context, conversationID string) (*instincts.Task, error)
	// StopAll stops the conversation's running tasks.
	StopAll(ctx context.Context, conversationID string) error
}

// Resolver continues whatever waited on a prompt once the owner answered
// it (an approved tool call, a harness question); its replies are sent
// after the instinct's. It runs on the conversation's goroutine and may
// fire events on mode, the conversation's machine.
type Resolver interface {
	Resolved(ctx context.Context, p store.Prompt, answer string, mode *modes.Machine) ([]chat.Reply, error)
}

// Config is what a Manager needs. Store, Senders, RoleOf and Logger are
// required.
type Config struct {
	Store *store.DB
	// Senders deliver replies, by channel name.
	Senders map[string]chat.Sender
	// Agent handles what no instinct took; nil when no LLM is configured.
	Agent Agent
	// NoAgent is the reply to a request while Agent is nil.
	NoAgent string
	// Tasks is the task engine; nil when none runs.
	Tasks Tasks
	// Resolver is told of answered prompts; nil when nothing asks.
	Resolver Resolver
	// Spend reports today's LLM spend for /status; nil when no LLM is
	// configured.
	Spend func(ctx context.Context) (*instincts.Spend, error)
	// RoleOf tells who a sender is on a channel: "" for anyone not
	// admitted, whose messages are dropped without a reply.
	RoleOf func(channel, userID string) chat.Role
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// IdleAfter is the quiet period after which an ALERT conversation
	// rests; 0 never rests.
	IdleAfter time.Duration
	// Scheduler carries out /remind, /schedule and /cron; nil when none.
	Scheduler Scheduler
	// Watcher carries out /watch; nil when none.
	Watcher Watcher
	// Location is the owner's time zone, in which instincts read and show
	// times; UTC when nil.
	Location *time.Location
}

// Manager owns the conversations.
type Manager struct {
	cfg        Config
	log        *slog.Logger
	now        func() time.Time
	instincts  *instincts.Set
	classifier *intent.Classifier

	mu     sync.Mutex
	convs  map[string]*conv
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// New builds a Manager. It starts nothing: call Open.
func New(cfg Config) *Manager {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Manager{
		cfg:        cfg,
		log:        cfg.Logger,
		now:        now,
		instincts:  instincts.New(),
		classifier: intent.New(),
		convs:      map[string]*conv{},
	}
}

// Open replays what a previous process left undone — unsent replies are
// delivered, conversations in a live mode are reconciled, unhandled
// messages are handled — and readies the Manager for Receive. The
// conversation goroutines live until Close.
func (m *Manager) Open(ctx context.Context) error {
	m.mu.Lock()
	if m.ctx != nil {
		m.mu.Unlock()
		return errors.New("conversation: already open")
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.mu.Unlock()

	for channel := range m.cfg.Senders {
		unsent, err := m.cfg.Store.Unsent(ctx, channel)
		if err != nil {
			return fmt.Errorf("conversation: open: %w", err)
		}
		for _, msg := range unsent {
			r, err := decode(msg)
			if err != nil {
				m.log.Error("unreadable outbox entry; dropped", "outbox", msg.ID, "err", err)
				continue
			}
			m.deliver(ctx, m.conv(msg.ConversationID, channel), []chat.Reply{r})
		}
	}
	live, err := m.cfg.Store.ModesIn(ctx, string(modes.Working), string(modes.Waiting), string(modes.Guarding))
	if err != nil {
		return fmt.Errorf("conversation: open: %w", err)
	}
	for _, s := range live {
		c, err := m.cfg.Store.Conversation(ctx, s.ConversationID)
		if err != nil {
			return fmt.Errorf("conversation: open: %w", err)
		}
		m.conv(c.ID, c.Channel)
	}
	unhandled, err := m.cfg.Store.Unhandled(ctx)
	if err != nil {
		return fmt.Errorf("conversation: open: %w", err)
	}
	for _, msg := range unhandled {
		c, err := m.cfg.Store.Conversation(ctx, msg.ConversationID)
		if err != nil {
			return fmt.Errorf("conversation: open: %w", err)
		}
		m.log.Info("replaying unhandled message", "conversation", c.ID, "message", msg.ID)
		role := m.cfg.RoleOf(c.Channel, msg.UserID)
		if role == "" {
			m.log.Warn("dropping replayed message from a sender no longer admitted", "conversation", c.ID, "message", msg.ID)
			if _, err := m.cfg.Store.Complete(ctx, msg.ID, nil); err != nil {
				return fmt.Errorf("conversation: open: %w", err)
			}
			continue
		}
		if err := m.enqueue(ctx, m.conv(c.ID, c.Channel), item{msgID: msg.ID, userID: msg.UserID, role: role, text: msg.Body}); err != nil {
			return fmt.Errorf("conversation: open: %w", err)
		}
	}
	return nil
}

// Close stops every conversation goroutine, cancelling turns in flight,
// and waits for them to return.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	cancel := m.cancel
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("conversation: close: %w", context.Cause(ctx))
	}
}

// Receive takes an inbound message from a channel. Messages from senders
// RoleOf does not admit, empty messages and duplicates are dropped without
// a reply. A stop is handled at once; anything else is
// stored and queued for the conversation's goroutine.
func (m *Manager) Receive(ctx context.Context, msg chat.Message) error {
	role := m.cfg.RoleOf(msg.Channel, msg.UserID)
	if role == "" {
		return nil
	}
	text := chat.Clean(msg.Text)
	if isBlank(text) {
		return nil
	}
	m.mu.Lock()
	closed, open := m.closed, m.ctx != nil
	m.mu.Unlock()
	if closed || !open {
		return ErrClosed
	}
	m.mu.Lock()
	c := m.convs[msg.ConversationID]
	m.mu.Unlock()
	if c == nil {
		// First message of this process for the conversation: make sure
		// it is stored before its goroutine loads its mode.
		if _, err := m.cfg.Store.EnsureConversation(ctx, msg.ConversationID, msg.Channel, msg.UserID); err != nil {
			return fmt.Errorf("conversation: receive: %w", err)
		}
		c = m.conv(msg.ConversationID, msg.Channel)
	}

	if n := utf8.RuneCountInString(text); n > chat.MaxMessageLen {
		reply := chat.Text(fmt.Sprintf("That message is %d characters long; the limit is %d. Please send something shorter, or put long text in a file in the workspace.", n, chat.MaxMessageLen))
		kept := fmt.Sprintf("[refused: %d characters]", n)
		out, err := encode(reply)
		if err != nil {
			return fmt.Errorf("conversation: receive: %w", err)
		}
		id, dup, err := m.cfg.Store.Refuse(ctx, store.NewInbound{ConversationID: c.id, ExternalID: msg.ExternalID, UserID: msg.UserID, Body: kept}, out)
		if err != nil || dup {
			return err
		}
		reply.ID = id
		m.deliver(ctx, c, []chat.Reply{reply})
		return nil
	}

	id, dup, err := m.cfg.Store.AddInbound(ctx, store.NewInbound{
		ConversationID: c.id, ExternalID: msg.ExternalID, UserID: msg.UserID, Body: text, InHistory: true,
	})
	if err != nil {
		return fmt.Errorf("conversation: receive: %w", err)
	}
	if dup {
		m.log.Debug("duplicate message dropped", "conversation", c.id, "external_id", msg.ExternalID)
		return nil
	}
	if m.instincts.IsStop(text) {
		return m.stop(ctx, c, item{msgID: id, userID: msg.UserID, role: role, text: text})
	}
	return m.enqueue(ctx, c, item{msgID: id, userID: msg.UserID, role: role, text: text})
}

func isBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\u00a0' && r != '\u200b' && r != '\u3000' {
			return false
		}
	}
	return true
}

// stop handles a stop ahead of the queue: it cancels the turn in flight
// and stops the conversation's tasks, then replies.
func (m *Manager) stop(ctx context.Context, c *conv, it item) (err error) {
	st := m.stopState(ctx, c, it)
	r, _ := m.instincts.Match(it.text, st)
	if st.Mode == string(modes.Resting) {
		// A stop is a message too: it wakes a resting conversation, once
		// its reply went out (deferred, so after the unlock below).
		defer func() {
			if werr := m.enqueue(ctx, c, item{event: modes.Woke, reason: "message from " + it.userID}); werr != nil && err == nil {
				err = fmt.Errorf("conversation: stop: %w", werr)
			}
		}()
	}
	// The stop's reply goes out before anything the conversation's
	// goroutine answers once its turn is cancelled.
	c.deliverMu.Lock()
	defer c.deliverMu.Unlock()
	c.cancelTurn(ErrStopped)
	if m.cfg.Tasks != nil {
		if err := m.cfg.Tasks.StopAll(ctx, c.id); err != nil {
			m.log.Error("stop tasks", "conversation", c.id, "err", err)
			r.Reply = "I could not stop everything: " + ErrorMessage(err)
		}
	}
	m.audit(ctx, c.id, it.userID, "stop", r.Reply)
	replies := []chat.Reply{chat.Text(r.Reply)}
	if err := m.store(ctx, it.msgID, replies); err != nil {
		return fmt.Errorf("conversation: stop: %w", err)
	}
	m.send(ctx, c, replies)
	return nil
}

// stopState is the state for a stop's reply, read without the
// conversation's goroutine, which may be busy.
func (m *Manager) stopState(ctx context.Context, c *conv, it item) instincts.State {
	st := instincts.State{Now: m.now(), Channel: c.channel, UserID: it.userID, Role: string(it.role), Mode: string(modes.Alert), Busy: c.busy()}
	if ms, err := m.cfg.Store.Mode(ctx, c.id); err == nil {
		st.Mode, st.ModeSince = ms.Mode, ms.Since
	}
	if m.cfg.Tasks != nil {
		if t, err := m.cfg.Tasks.Running(ctx, c.id); err == nil {
			st.Task = t
		}
	}
	return st
}

// Notify sends a message to a conversation outside any turn (task
// progress, reminders), through the outbox.
func (m *Manager) Notify(ctx context.Context, conversationID string, r chat.Reply) error {
	return m.NotifyOnce(ctx, conversationID, "", r)
}

// NotifyOnce is Notify with an idempotency key: a message whose key was
// queued before in the conversation is not queued or sent again, so a
// sender that may repeat itself after a crash (a reminder) repeats nothing.
func (m *Manager) NotifyOnce(ctx context.Context, conversationID, key string, r chat.Reply) error {
	conv, err := m.cfg.Store.Conversation(ctx, conversationID)
	if err != nil {
		return fmt.Errorf("conversation: notify: %w", err)
	}
	out, err := encode(r)
	if err != nil {
		return fmt.Errorf("conversation: notify: %w", err)
	}
	out.Once = key
	ids, err := m.cfg.Store.AddOutbound(ctx, conversationID, out)
	if err != nil {
		return fmt.Errorf("conversation: notify: %w", err)
	}
	if ids[0] == 0 {
		m.log.Debug("notification already queued", "conversation", conversationID, "key", key)
		return nil
	}
	r.ID = ids[0]
	m.deliver(ctx, m.conv(conv.ID, conv.Channel), []chat.Reply{r})
	return nil
}

// Fire queues a mode event from outside the conversation (a task ended),
// applied in order with the conversation's messages.
func (m *Manager) Fire(ctx context.Context, conversationID string, e modes.Event, reason string) error {
	conv, err := m.cfg.Store.Conversation(ctx, conversationID)
	if err != nil {
		return fmt.Errorf("conversation: fire %s: %w", e, err)
	}
	return m.enqueue(ctx, m.conv(conv.ID, conv.Channel), item{event: e, reason: reason})
}

// Idle waits until the conversation has handled everything queued so far.
func (m *Manager) Idle(ctx context.Context, conversationID string) error {
	m.mu.Lock()
	c := m.convs[conversationID]
	m.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.waitIdle(ctx)
}

// conv returns the conversation's runtime, starting its goroutine the
// first time.
func (m *Manager) conv(id, channel string) *conv {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.convs[id]; ok {
		return c
	}
	c := newConv(id, channel)
	m.convs[id] = c
	if !m.closed && m.ctx != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.run(m.ctx, c)
		}()
	}
	return c
}

func (m *Manager) enqueue(ctx context.Context, c *conv, it item) error {
	c.addPending()
	select {
	case c.mailbox <- it:
		return nil
	case <-ctx.Done():
		c.donePending()
		return fmt.Errorf("conversation: enqueue: %w", context.Cause(ctx))
	case <-c.stopped:
		c.donePending()
		return ErrClosed
	}
}

// complete marks an inbound message handled with its replies queued in the
// outbox, then delivers them.
func (m *Manager) complete(ctx context.Context, c *conv, msgID int64, replies []chat.Reply) error {
	if err := m.store(ctx, msgID, replies); err != nil {
		return err
	}
	m.deliver(ctx, c, replies)
	return nil
}

// store marks an inbound message handled with its replies queued in the
// outbox, setting each reply's outbox id.
func (m *Manager) store(ctx context.Context, msgID int64, replies []chat.Reply) error {
	out := make([]store.Outgoing, len(replies))
	for i, r := range replies {
		var err error
		if out[i], err = encode(r); err != nil {
			return err
		}
	}
	ids, err := m.cfg.Store.Complete(ctx, msgID, out)
	if err != nil {
		return err
	}
	for i := range replies {
		replies[i].ID = ids[i]
	}
	return nil
}

// deliver sends stored outbound messages in order and marks each sent.
// A failed send stays in the outbox for the next start.
func (m *Manager) deliver(ctx context.Context, c *conv, replies []chat.Reply) {
	c.deliverMu.Lock()
	defer c.deliverMu.Unlock()
	m.send(ctx, c, replies)
}

// send is deliver with the conversation's delivery lock held.
func (m *Manager) send(ctx context.Context, c *conv, replies []chat.Reply) {
	sender := m.cfg.Senders[c.channel]
	if sender == nil {
		m.log.Warn("no sender for channel; replies stay in the outbox", "channel", c.channel, "conversation", c.id)
		return
	}
	for _, r := range replies {
		if err := sender.Send(ctx, c.id, r); err != nil {
			m.log.Error("send reply", "conversation", c.id, "outbox", r.ID, "err", err)
			return
		}
		if err := m.cfg.Store.MarkSent(context.WithoutCancel(ctx), r.ID); err != nil {
			m.log.Error("mark reply sent", "conversation", c.id, "outbox", r.ID, "err", err)
		}
	}
}

func (m *Manager) audit(ctx context.Context, conversationID, actor, action, detail string) {
	err := m.cfg.Store.Audit(context.WithoutCancel(ctx), store.AuditEntry{ConversationID: conversationID, Actor: actor, Action: action, Detail: detail})
	if err != nil {
		m.log.Error("audit", "action", action, "err", err)
	}
}
