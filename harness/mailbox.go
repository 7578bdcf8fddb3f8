package harness

import (
	"errors"
	"sync"
)

// Steering says how a two-way CLI takes a message from the user while it
// works (Traits.Steer). The values are shown to the owner.
type Steering string

const (
	// SteerNone: it takes none; a message waits for the next run.
	SteerNone Steering = ""
	// SteerTurn: a message is a turn of its own, which the CLI starts
	// when the running one ends and which ends with its own result
	// (Claude Code's stream-json input queues user messages so).
	SteerTurn Steering = "turn"
	// SteerInline: a message joins the running turn (Codex's turn/steer).
	SteerInline Steering = "inline"
)

// ErrRunEnded: the run takes no more messages (its last turn ended, or its
// CLI takes none while it works); the message should wait for the next run.
var ErrRunEnded = errors.New("the run takes no more messages")

// Mailbox carries the user's messages to a running two-way CLI
// (Task.Mailbox). Put may be called from any goroutine and never blocks;
// RunTwoWay delivers what was put at the CLI's next chance, in order. A
// mailbox serves one run.
//
// It also decides when the run's input ends: after as many results as
// turns were asked for (the opening's, and one per SteerTurn message), so
// a message accepted before the last result is always answered. Once it
// is closed, Put fails with ErrRunEnded.
type Mailbox struct {
	mu       sync.Mutex
	steer    Steering
	msgs     []string
	awaiting int
	closed   bool
	// interrupt: the run is to end its turn now (Interrupt); sent says
	// the feeder sent the CLI its interrupt.
	interrupt bool
	sent      bool
	wake      chan struct{}
}

// NewMailbox returns an open mailbox, for a run whose opening turn is
// awaited.
func NewMailbox() *Mailbox {
	return &Mailbox{awaiting: 1, wake: make(chan struct{}, 1)}
}

// Put offers text to the running CLI. It fails with ErrRunEnded when the
// run takes no more messages.
func (m *Mailbox) Put(text string) error {
	m.mu.Lock()
	if m.closed || m.steer == SteerNone {
		m.mu.Unlock()
		return ErrRunEnded
	}
	m.msgs = append(m.msgs, text)
	if m.steer == SteerTurn {
		m.awaiting++
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return nil
}

// Closed tells whether the run takes no more messages.
func (m *Mailbox) Closed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// open sets how the run's CLI takes messages, when the run starts.
func (m *Mailbox) open(s Steering) {
	m.mu.Lock()
	m.steer = s
	m.mu.Unlock()
}

// Interrupt asks the running CLI to end its turn now, as its protocol
// interrupts one (Claude Code's interrupt control request, Codex's
// turn/interrupt, ACP's session/cancel): the turn's result ends the run,
// and the run takes no more messages (Put fails with ErrRunEnded; what
// waited undelivered comes back as Outcome.Undelivered). It never blocks,
// and reports false when the run took no more messages already.
func (m *Mailbox) Interrupt() bool {
	m.mu.Lock()
	if m.closed || m.interrupt {
		m.mu.Unlock()
		return false
	}
	m.interrupt, m.closed = true, true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

// toInterrupt tells the feeder once that the CLI is to be interrupted.
func (m *Mailbox) toInterrupt() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.interrupt || m.sent {
		return false
	}
	m.sent = true
	return true
}

// unsent takes back a toInterrupt whose interrupt could not be sent yet.
func (m *Mailbox) unsent() {
	m.mu.Lock()
	m.sent = false
	m.mu.Unlock()
}

// take returns the messages put since the last take; none once the run
// is interrupted (they wait for the next run).
func (m *Mailbox) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.interrupt {
		return nil
	}
	msgs := m.msgs
	m.msgs = nil
	return msgs
}

// unshift puts back messages that could not be delivered yet, before
// any put since.
func (m *Mailbox) unshift(msgs []string) {
	if len(msgs) == 0 {
		return
	}
	m.mu.Lock()
	m.msgs = append(append([]string(nil), msgs...), m.msgs...)
	m.mu.Unlock()
}

// result counts a result of the CLI and tells whether it was the last
// awaited: the mailbox is then closed.
func (m *Mailbox) result() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.awaiting--
	if m.awaiting <= 0 && len(m.msgs) == 0 {
		m.closed = true
	}
	if m.interrupt {
		return true // the interrupted turn's result ends the run
	}
	return m.closed
}

// close closes the mailbox (the run ended) and returns the messages that
// were never delivered.
func (m *Mailbox) close() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	msgs := m.msgs
	m.msgs = nil
	return msgs
}
