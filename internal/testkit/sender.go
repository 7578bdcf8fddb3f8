package testkit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
)

// Sent is one reply a Recorder received.
type Sent struct {
	ConversationID string
	Reply          chat.Reply
}

// Recorder is a chat.Sender that keeps what it is sent, for tests of the
// conversation runtime. It can be told to fail, like a channel that is
// down.
type Recorder struct {
	mu      sync.Mutex
	sent    []Sent
	fail    bool
	changed chan struct{}
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{changed: make(chan struct{})} }

// ErrChannelDown is what a failing Recorder returns from Send.
var ErrChannelDown = errors.New("testkit: channel down")

// Send records r, or fails while the Recorder is set to fail.
func (r *Recorder) Send(_ context.Context, conversationID string, reply chat.Reply) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return ErrChannelDown
	}
	r.sent = append(r.sent, Sent{ConversationID: conversationID, Reply: reply})
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

// SetFailing makes Send fail (true) or work (false).
func (r *Recorder) SetFailing(fail bool) {
	r.mu.Lock()
	r.fail = fail
	r.mu.Unlock()
}

// Sent returns everything recorded so far.
func (r *Recorder) Sent() []Sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sent(nil), r.sent...)
}

// Texts returns the text of every reply recorded so far.
func (r *Recorder) Texts() []string {
	var out []string
	for _, s := range r.Sent() {
		out = append(out, s.Reply.Text)
	}
	return out
}

// WaitFor waits until at least n replies were recorded and returns them;
// it fails the test after a generous deadline.
func (r *Recorder) WaitFor(t testing.TB, n int) []Sent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		if len(r.sent) >= n {
			out := append([]Sent(nil), r.sent...)
			r.mu.Unlock()
			return out
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited for %d replies, got %d: %q", n, len(r.Sent()), r.Texts())
			return nil
		}
	}
}
