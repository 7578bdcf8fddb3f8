package task

import (
	"context"
	"sync"
)

// Feed is the Observer that the long-lived processes give the engine: it
// never blocks and never calls anyone. Updates are queued in order for one
// reader (the conversation layer), which takes them when Ready fires.
//
// The queue is unbounded: an update is small, the engine produces them at
// the pace of a CLI's output (and writes the same events to the store
// first, which bounds that pace), and the reader takes everything queued
// at each wake-up. Nothing is lost while the reader is busy; what is
// queued when the process dies is recovered from the store at the next
// start (tasks are reconciled, not replayed).
type Feed struct {
	mu    sync.Mutex
	queue []Update
	ready chan struct{}
}

// NewFeed returns an empty Feed.
func NewFeed() *Feed { return &Feed{ready: make(chan struct{}, 1)} }

// TaskUpdate implements Observer: it queues u and returns at once.
func (f *Feed) TaskUpdate(_ context.Context, u Update) {
	f.mu.Lock()
	f.queue = append(f.queue, u)
	f.mu.Unlock()
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

// Ready fires (at least once) after updates were queued.
func (f *Feed) Ready() <-chan struct{} { return f.ready }

// Take returns the updates queued so far, oldest first, and empties the
// queue.
func (f *Feed) Take() []Update {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queue
	f.queue = nil
	return q
}
