package testkit

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// Clock is a clock that moves only when a test moves it, for code that
// takes its time from an injected clock (Now and After). Timers made with
// After fire when Set or Advance reaches their deadline.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
	changed chan struct{}
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t, changed: make(chan struct{})} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the clock's time once it reached
// now+d. The channel has room for that one value, so a timer nobody waits
// for any more does not block the clock.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: c.now.Add(d), ch: ch})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// Set moves the clock to t (never backwards) and fires the timers due.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// Advance moves the clock d ahead.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// NextTimer waits until a timer is pending and returns the earliest
// deadline; it fails the test after a generous real-time deadline.
func (c *Clock) NextTimer(t testing.TB) time.Time {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.waiters) > 0 {
			sort.Slice(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
			at := c.waiters[0].at
			c.mu.Unlock()
			return at
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("no timer was set on the clock")
			return time.Time{}
		}
	}
}

// WaitSleepers waits until at least n timers are pending beyond the
// clock's time: with n goroutines each sleeping on one timer when idle,
// that is when all of them have finished what the last Set woke them for.
// It fails the test after a generous real-time deadline.
func (c *Clock) WaitSleepers(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		pending := 0
		for _, w := range c.waiters {
			if w.at.After(c.now) {
				pending++
			}
		}
		changed := c.changed
		c.mu.Unlock()
		if pending >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d of %d timers pending", pending, n)
			return
		}
	}
}
