package conversation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// Agent answers a message that no instinct took: the ReAct loop over the
// LLM. It runs on the conversation's goroutine; ctx is cancelled with
// ErrStopped when the owner stops the turn. It never changes the mode: a
// prompt it opens (an approval, a question) moves the mode when it
// returns (session.followPrompt).
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
	// Attachments are the files that came with the message, kept by
	// Fetch (downloaded, checked): a task the turn starts or tells gets
	// them.
	Attachments []task.Attachment
	// Notify sends a message to the conversation at once, before the
	// turn's replies (progress).
	Notify func(ctx context.Context, r chat.Reply) error
}

// Tasks is what the conversation needs of the task engine; *task.Engine
// satisfies it. None of these waits for a run: RequestCancel returns once
// the stop is under way, and the task's end arrives later as an update.
type Tasks interface {
	List(ctx context.Context, f task.Filter) ([]task.Task, error)
	RequestCancel(ctx context.Context, id string) (<-chan struct{}, error)
	Respond(ctx context.Context, id, answer string) error
	// RequestShip and RequestPRAction start shipping a task or acting on
	// its pull request and return; what happened arrives as updates.
	RequestShip(ctx context.Context, id string) error
	RequestPRAction(ctx context.Context, id string, a task.PRAction) error
}

// Attachments downloads and checks a message's files; an error wrapping
// its refusal is what the owner is told, and then nothing is kept.
type Attachments interface {
	Fetch(ctx context.Context, atts []chat.Attachment) ([]task.Attachment, error)
}

// Shipping carries out /ship (inside the command's transaction, like
// Scheduler) and describes a workspace's shipping for /status.
type Shipping interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
	Describe(ctx context.Context, workspace string) string
}

// AutoMerge carries out /automerge: when a workspace's pull requests
// merge on their own (inside the command's transaction, like Scheduler).
type AutoMerge interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// Memory keeps what happened outside the agent's turns (a task's result)
// in the conversation's history, so that the agent knows of it.
type Memory interface {
	Remember(ctx context.Context, conversationID, note string) error
}

// Resolver continues whatever waited on a prompt once the owner answered
// it (an approved tool call); its replies are sent after the instinct's.
// A task's question is answered by the conversation itself. It runs on
// the conversation's goroutine; a prompt it opens moves the mode there.
type Resolver interface {
	Resolved(ctx context.Context, p store.Prompt, answer string, role chat.Role) ([]chat.Reply, error)
}

// Config is what a Manager needs. Store, Senders, RoleOf and Logger are
// required.
type Config struct {
	Store *store.DB
	// Senders deliver replies, by channel name (through the Manager's
	// outbox).
	Senders map[string]chat.Sender
	// Agent handles what no instinct took; nil when no LLM is configured.
	Agent Agent
	// NoAgent is the reply to a request while Agent is nil.
	NoAgent string
	// Tasks is the task engine; nil when none runs.
	Tasks Tasks
	// Attachments takes the files that come with messages into Fetch's
	// keeping (package attach); nil takes none (they are only named).
	Attachments Attachments
	// Steering answers the requests of two-way coding CLIs, shows the
	// policy and starts /plan tasks (the task engine); nil when none.
	Steering Steering
	// Updates is what the task engine publishes; nil when none runs.
	Updates *task.Feed
	// EditEvery is the least time between two edits of a task's status
	// message for its steps (progress.DefaultEditEvery when 0).
	EditEvery time.Duration
	// Scrub removes secrets from task text before progress messages cut
	// it to size (nil: none).
	Scrub func(string) string
	// TaskLink is the task page's link to a task, put on its status
	// message and its result; nil (or "") puts none.
	TaskLink func(taskID string) string
	// Memory keeps task results in the agent's history; nil when no agent.
	Memory Memory
	// Resolver is told of answered prompts; nil when nothing asks.
	Resolver Resolver
	// DaySpend reports today's whole spend (tasks and Fetch's own calls)
	// and its cap for /status; nil shows none.
	DaySpend func(ctx context.Context) (*instincts.DaySpend, error)
	// Limits describes the coding CLIs' subscription windows for
	// /status ("" when none reported any); nil shows none.
	Limits func(ctx context.Context) string
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
	// Shipping carries out /ship; nil when this Fetch ships nothing.
	Shipping Shipping
	// Workspaces are what /use selects from; nil: /use is not available.
	Workspaces Workspaces
	// Allowed carries out /allow; nil: /allow is not available.
	Allowed Allowlist
	// Hosts carries out /hosts and describes the way out for /status;
	// nil: /hosts is not available.
	Hosts Hosts
	// AutoMerge carries out /automerge (like Scheduler); nil: /automerge
	// is not available.
	AutoMerge AutoMerge
	// Checks carries out /checks (package checks), like Scheduler; nil:
	// /checks is not available.
	Checks Checks
	// Engines describes the Docker engines and their load for /status;
	// nil when Fetch uses only the local one.
	Engines func(ctx context.Context) string
	// Location is the owner's time zone, in which instincts read and show
	// times; UTC when nil.
	Location *time.Location
	// Metrics counts messages and instinct latency; nil counts nothing.
	Metrics Metrics
}

// Manager owns the conversations.
type Manager struct {
	cfg        Config
	log        *slog.Logger
	now        func() time.Time
	instincts  *instincts.Set
	classifier *intent.Classifier

	// out delivers everything the conversations send; Open opens it
	// first, Close closes it last.
	out *outbox

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
		out:        newOutbox(cfg.Store, cfg.Senders, cfg.Logger, cfg.Metrics),
		cfg:        cfg,
		log:        cfg.Logger,
		now:        now,
		instincts:  instincts.New(),
		classifier: intent.New(),
		convs:      map[string]*conv{},
	}
}

// Open replays what a previous process left undone — prompts it left open
// expire (the owner is told once per conversation), conversations in a
// live mode are reconciled, unhandled messages are handled — and readies
// the Manager for Receive. Its outbox opens first. The conversation
// goroutines, and the one that routes task updates to them, live until
// Close.
func (m *Manager) Open(ctx context.Context) error {
	m.mu.Lock()
	if m.ctx != nil {
		m.mu.Unlock()
		return errors.New("conversation: already open")
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.mu.Unlock()
	if err := m.out.Open(ctx); err != nil {
		return err
	}
	if m.cfg.Updates != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.route(m.ctx)
		}()
	}

	if err := m.expireAtStart(ctx); err != nil {
		return fmt.Errorf("conversation: open: %w", err)
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
// and waits for them to return. Task updates published before Close (the
// runs a closing engine stopped) are still handled and their messages
// queued, and its outbox delivers what it can within ctx before it
// closes.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	open := m.ctx != nil && !m.closed
	m.mu.Unlock()
	if open {
		m.dispatch(ctx)
	}
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
	case <-ctx.Done():
		return fmt.Errorf("conversation: close: %w", context.Cause(ctx))
	}
	return m.out.Close(ctx)
}

// Receive takes an inbound message from a channel. Messages from senders
// RoleOf does not admit, empty messages and duplicates are dropped without
// a reply. A stop is handled at once; anything else is
// stored and queued for the conversation's goroutine.
func (m *Manager) Receive(ctx context.Context, msg chat.Message) error {
	received := time.Now()
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
		m.out.queue(c.id, c.channel, outReply, []chat.Reply{reply})
		m.countIn(inRefused)
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
		return m.stop(ctx, c, item{msgID: id, userID: msg.UserID, role: role, text: text, received: received})
	}
	return m.enqueue(ctx, c, item{msgID: id, userID: msg.UserID, role: role, text: text, received: received, attachments: msg.Attachments})
}

func isBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\u00a0' && r != '\u200b' && r != '\u3000' {
			return false
		}
	}
	return true
}

// stop handles a stop ahead of the queue, on the caller's goroutine, and
// never waits for what it stops: it cancels the turn in flight, asks the
// engine to stop the conversation's tasks, and queues its reply. The
// cancelled turn's replies are dropped; the stopped tasks' ends reach the
// conversation later as updates.
func (m *Manager) stop(ctx context.Context, c *conv, it item) error {
	// One look at the conversation's tasks serves the reply and the stop.
	var open []task.Task
	var listErr error
	if m.cfg.Tasks != nil {
		open, listErr = m.cfg.Tasks.List(ctx, task.Filter{ConversationID: c.id, States: []task.State{task.Queued, task.Running, task.WaitingInput}})
		if listErr == nil && len(open) == 0 && it.role == chat.Owner {
			// The owner's /stop also reaches a task started from the
			// terminal on the workspace selected here.
			open, listErr = m.terminalTasks(ctx, c.id)
		}
	}
	st := m.stopState(ctx, c, it, open)
	r, _ := m.instincts.Match(it.text, st)
	if err := errors.Join(listErr, m.cancelTasks(ctx, open)); err != nil {
		m.log.Error("stop tasks", "conversation", c.id, "err", err)
		r.Reply = "I could not stop everything: " + ErrorMessage(err)
	}
	replies := []chat.Reply{chat.Text(r.Reply)}
	// Handled, audited and answered in one transaction.
	ids, err := m.cfg.Store.CompleteWith(ctx, it.msgID, func(tx *sql.Tx) ([]store.Outgoing, error) {
		if err := m.cfg.Store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: c.id, Actor: it.userID, Action: "stop", Detail: r.Reply}); err != nil {
			return nil, err
		}
		return encodeAll(replies)
	})
	if err != nil {
		c.cancelTurn(ErrStopped)
		return fmt.Errorf("conversation: stop: %w", err)
	}
	replies[0].ID = ids[0]
	// Queued before the turn is cancelled, so that the stop's reply goes
	// out before anything the conversation answers afterwards.
	m.out.queue(c.id, c.channel, outReply, replies)
	m.countIn(inStop)
	m.instinctReplied(it.received)
	c.cancelTurn(ErrStopped)
	if st.Mode == string(modes.Resting) {
		// A stop is a message too: it wakes a resting conversation.
		c.tell(note{wake: "message from " + it.userID})
	}
	return nil
}

// stopTasks asks the engine to stop every task of the conversation that
// has not ended; it does not wait for them.
func (m *Manager) stopTasks(ctx context.Context, conversationID string) error {
	if m.cfg.Tasks == nil {
		return nil
	}
	open, err := m.cfg.Tasks.List(ctx, task.Filter{ConversationID: conversationID, States: []task.State{task.Queued, task.Running, task.WaitingInput}})
	if err != nil {
		return err
	}
	return m.cancelTasks(ctx, open)
}

// cancelTasks asks the engine to stop tasks, without waiting; one that
// ended meanwhile is no failure.
func (m *Manager) cancelTasks(ctx context.Context, ts []task.Task) error {
	var errs []error
	for _, t := range ts {
		if _, err := m.cfg.Tasks.RequestCancel(ctx, t.ID); err != nil && !errors.Is(err, task.ErrState) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunningTask returns the conversation's running task as instincts show
// it, nil when none: the oldest one that runs.
func RunningTask(ctx context.Context, ts Tasks, conversationID string) (*instincts.Task, error) {
	list, err := ts.List(ctx, task.Filter{ConversationID: conversationID, States: []task.State{task.Running}})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return instinctTask(list[len(list)-1]), nil
}

// instinctTask is a task as the instincts show it.
func instinctTask(t task.Task) *instincts.Task {
	return &instincts.Task{ID: t.ID, Goal: t.Goal, Harness: t.Harness, Workspace: t.Workspace, StartedAt: t.StartedAt,
		Bypass: t.Mode == task.Work && harness.RunsOneShot(harness.Name(t.Harness))}
}

// running is RunningTask of the configured engine (nil without one), or
// else a task started from the terminal that runs on the workspace
// selected in the conversation.
func (m *Manager) running(ctx context.Context, conversationID string) (*instincts.Task, error) {
	if m.cfg.Tasks == nil {
		return nil, nil
	}
	t, err := RunningTask(ctx, m.cfg.Tasks, conversationID)
	if t != nil || err != nil {
		return t, err
	}
	open, err := m.terminalTasks(ctx, conversationID)
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].State == task.Running {
			return instinctTask(open[i]), nil
		}
	}
	return nil, err
}

// terminalTasks are the tasks from the terminal (no conversation) that
// are queued, run or wait on the workspace selected in the conversation.
func (m *Manager) terminalTasks(ctx context.Context, conversationID string) ([]task.Task, error) {
	c, err := m.cfg.Store.Conversation(ctx, conversationID)
	if err != nil || c.Workspace == "" {
		return nil, nil
	}
	list, err := m.cfg.Tasks.List(ctx, task.Filter{Workspace: c.Workspace, States: []task.State{task.Queued, task.Running, task.WaitingInput}})
	var out []task.Task
	for _, t := range list {
		if t.ConversationID == "" {
			out = append(out, t)
		}
	}
	return out, err
}

// stopState is the state for a stop's reply, read without the
// conversation's goroutine, which may be busy.
func (m *Manager) stopState(ctx context.Context, c *conv, it item, open []task.Task) instincts.State {
	st := instincts.State{Now: m.now(), Channel: c.channel, UserID: it.userID, Role: string(it.role), Mode: string(modes.Alert), Busy: c.busy()}
	if ms, err := m.cfg.Store.Mode(ctx, c.id); err == nil {
		st.Mode, st.ModeSince = ms.Mode, ms.Since
	}
	// The oldest running one (the list is newest first).
	for i := len(open) - 1; i >= 0; i-- {
		if t := open[i]; t.State == task.Running {
			st.Task = instinctTask(t)
			break
		}
	}
	return st
}

// Notify sends a message to a conversation outside any turn, through
// the outbox.
func (m *Manager) Notify(ctx context.Context, conversationID string, r chat.Reply) error {
	return m.out.NotifyOnce(ctx, conversationID, "", r)
}

// NotifyOnce is Notify with an idempotency key: a message whose key was
// queued before in the conversation is not queued or sent again, so a
// sender that may repeat itself after a crash (a reminder) repeats nothing.
func (m *Manager) NotifyOnce(ctx context.Context, conversationID, key string, r chat.Reply) error {
	return m.out.NotifyOnce(ctx, conversationID, key, r)
}

// Idle waits until the conversation has handled the messages queued so
// far and its replies were handed to the channel.
func (m *Manager) Idle(ctx context.Context, conversationID string) error {
	m.mu.Lock()
	c := m.convs[conversationID]
	m.mu.Unlock()
	if c != nil {
		if err := c.waitIdle(ctx); err != nil {
			return err
		}
	}
	return m.out.Flush(ctx, conversationID)
}

// route hands the task engine's updates to their conversations until ctx
// ends. It never waits for a conversation.
func (m *Manager) route(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Updates.Ready():
			m.dispatch(ctx)
		}
	}
}

// dispatch hands the updates queued so far to their conversations.
func (m *Manager) dispatch(ctx context.Context) {
	if m.cfg.Updates == nil {
		return
	}
	for _, u := range m.cfg.Updates.Take() {
		id := u.Task.ConversationID
		if u.Request != nil && u.Request.Relayed {
			id = u.Request.ConversationID // a terminal task's request, relayed here
		}
		if id == "" {
			continue // a task of the command line
		}
		m.mu.Lock()
		c := m.convs[id]
		m.mu.Unlock()
		if c == nil {
			conv, err := m.cfg.Store.Conversation(ctx, id)
			if err != nil {
				m.log.Error("task update for an unknown conversation; dropped", "conversation", id, "task", u.Task.ID, "update", u.Kind, "err", err)
				continue
			}
			c = m.conv(conv.ID, conv.Channel)
		}
		c.tell(note{update: &u})
	}
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

// enqueue puts a stored message in the conversation's mailbox. It never
// waits: a channel's goroutine (Discord's gateway handles events one at a
// time) must not stall behind a busy conversation.
func (m *Manager) enqueue(_ context.Context, c *conv, it item) error {
	c.addPending()
	select {
	case <-c.stopped:
		c.donePending()
		return ErrClosed
	default:
	}
	c.put(it)
	return nil
}

// complete marks an inbound message handled with its replies queued in the
// outbox, then hands them to the outbox.
func (m *Manager) complete(ctx context.Context, c *conv, msgID int64, replies []chat.Reply) error {
	if err := m.store(ctx, msgID, replies); err != nil {
		return err
	}
	m.out.queue(c.id, c.channel, outReply, replies)
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

// send stores a task's status messages outside any turn and queues them
// for delivery.
func (m *Manager) send(ctx context.Context, c *conv, replies ...chat.Reply) {
	if _, err := m.out.add(ctx, c.id, c.channel, "", outProgress, replies...); err != nil {
		m.log.Error("queue a message", "conversation", c.id, "err", err)
	}
}

func (m *Manager) audit(ctx context.Context, conversationID, actor, action, detail string) {
	err := m.cfg.Store.Audit(context.WithoutCancel(ctx), store.AuditEntry{ConversationID: conversationID, Actor: actor, Action: action, Detail: detail})
	if err != nil {
		m.log.Error("audit", "action", action, "err", err)
	}
}

// IsStop tells whether text is a stop (term.Stopper): a channel that
// queues typed lines hands a stop over ahead of them.
func (m *Manager) IsStop(text string) bool { return m.instincts.IsStop(chat.Clean(text)) }
