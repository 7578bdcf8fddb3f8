package conversation

import "time"

// Metrics counts what the conversations do. Its methods are cheap and
// never block (they are called on a conversation's goroutine and on a
// channel's); a nil Config.Metrics counts nothing.
type Metrics interface {
	// MessageIn counts a handled inbound message by how it was taken: one
	// of the in* kinds or an intent class.
	MessageIn(kind string)
	// MessageOut counts n messages queued for delivery, by out* kind.
	MessageOut(kind string, n int)
	// InstinctReply observes the time from Receive to an instinct's
	// reply being queued.
	InstinctReply(d time.Duration)
}

// How an inbound message was taken (besides intent's classes).
const (
	inStop     = "stop"
	inInstinct = "instinct"
	// inPrompt: an open question or approval took it (the answer, or a
	// reminder of what is waiting).
	inPrompt  = "prompt"
	inRefused = "refused"
)

// What an outbound message is.
const (
	// outReply answers an inbound message.
	outReply = "reply"
	// outProgress is a turn's progress note or a task's status message.
	outProgress = "progress"
	// outResult is a task's end.
	outResult = "result"
	// outNotice is anything sent outside a turn: reminders, schedules,
	// watches, expired prompts.
	outNotice = "notice"
)

// countIn counts an inbound message; nil metrics count nothing.
func (m *Manager) countIn(kind string) {
	if m.cfg.Metrics != nil {
		m.cfg.Metrics.MessageIn(kind)
	}
}

// instinctReplied observes an instinct's latency from received (zero for
// a message replayed after a restart: not observed).
func (m *Manager) instinctReplied(received time.Time) {
	if m.cfg.Metrics != nil && !received.IsZero() {
		// A measurement, on the monotonic clock (not Config.Now).
		m.cfg.Metrics.InstinctReply(time.Since(received))
	}
}
