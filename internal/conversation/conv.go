package conversation

import (
	"context"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/task"
)

// item is one entry of a conversation's mailbox: an inbound message.
type item struct {
	msgID  int64
	userID string
	role   chat.Role
	text   string
	// received is when Receive took it; zero for a message replayed
	// after a restart.
	received time.Time
	// attachments came with it (not downloaded yet; a message replayed
	// after a restart has none: its text names them).
	attachments []chat.Attachment
}

// conv is the runtime of one conversation. Its goroutine (Manager.run)
// owns the mode machine and the turn; other goroutines touch only the
// fields guarded below.
type conv struct {
	id      string
	channel string
	// mailbox holds the stored messages waiting for the goroutine, in
	// order; mail fires when it is not empty. Unbounded: a message is
	// already in the store, and channels bound the pace (Discord's rate
	// limit per user, the terminal's own queue).
	mailMu  sync.Mutex
	mailbox []item
	mail    chan struct{}
	// stopped is closed when the goroutine returns.
	stopped chan struct{}

	mu      sync.Mutex
	turn    context.CancelCauseFunc // the turn in flight, nil when none
	pending int                     // queued or in-flight items
	idle    chan struct{}           // closed while pending == 0

	// notes are what happened outside the conversation (task updates,
	// a wake-up), queued without blocking whoever reports them; the
	// goroutine takes them all when ready fires. Unbounded: see task.Feed.
	notesMu sync.Mutex
	notes   []note
	ready   chan struct{}
}

// note is one thing that happened outside the conversation: a task's
// update, or (wake, its reason) a stop that arrived while it rested.
type note struct {
	update *task.Update
	wake   string
}

// tell queues a note for the conversation's goroutine. It never blocks.
func (c *conv) tell(n note) {
	c.notesMu.Lock()
	c.notes = append(c.notes, n)
	c.notesMu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// put appends a message to the mailbox.
func (c *conv) put(it item) {
	c.mailMu.Lock()
	c.mailbox = append(c.mailbox, it)
	c.mailMu.Unlock()
	c.more()
}

// more fires mail when the mailbox is not empty.
func (c *conv) more() {
	c.mailMu.Lock()
	n := len(c.mailbox)
	c.mailMu.Unlock()
	if n == 0 {
		return
	}
	select {
	case c.mail <- struct{}{}:
	default:
	}
}

// next takes the oldest message of the mailbox.
func (c *conv) next() (item, bool) {
	c.mailMu.Lock()
	defer c.mailMu.Unlock()
	if len(c.mailbox) == 0 {
		return item{}, false
	}
	it := c.mailbox[0]
	c.mailbox = c.mailbox[1:]
	return it, true
}

// takeNotes returns the queued notes, oldest first.
func (c *conv) takeNotes() []note {
	c.notesMu.Lock()
	defer c.notesMu.Unlock()
	ns := c.notes
	c.notes = nil
	return ns
}

func newConv(id, channel string) *conv {
	idle := make(chan struct{})
	close(idle)
	return &conv{id: id, channel: channel, mail: make(chan struct{}, 1), stopped: make(chan struct{}), idle: idle, ready: make(chan struct{}, 1)}
}

func (c *conv) setTurn(cancel context.CancelCauseFunc) {
	c.mu.Lock()
	c.turn = cancel
	c.mu.Unlock()
}

// cancelTurn cancels the turn in flight, if any, with cause.
func (c *conv) cancelTurn(cause error) {
	c.mu.Lock()
	cancel := c.turn
	c.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

func (c *conv) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turn != nil
}

func (c *conv) addPending() {
	c.mu.Lock()
	if c.pending == 0 {
		c.idle = make(chan struct{})
	}
	c.pending++
	c.mu.Unlock()
}

func (c *conv) donePending() {
	c.mu.Lock()
	c.pending--
	if c.pending == 0 {
		close(c.idle)
	}
	c.mu.Unlock()
}

func (c *conv) waitIdle(ctx context.Context) error {
	c.mu.Lock()
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-c.stopped:
		return ErrClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
