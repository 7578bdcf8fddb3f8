package discord

import (
	"sync"
	"time"
)

// limiter is a per-user sliding-window rate limit: at most n messages in
// any period. Only admitted users reach it, so it holds a handful of
// entries of at most n timestamps each.
type limiter struct {
	n   int
	per time.Duration

	mu     sync.Mutex
	recent map[string][]time.Time
	// warned marks users told to slow down since their last accepted
	// message: they get one warning per burst.
	warned map[string]bool
}

func newLimiter(n int, per time.Duration) *limiter {
	return &limiter{n: n, per: per, recent: map[string][]time.Time{}, warned: map[string]bool{}}
}

// allow records a message from user at now and tells whether it is within
// the limit; warn is true for the first message over the limit of a
// burst, which gets the one "slow down" reply.
func (l *limiter) allow(user string, now time.Time) (ok, warn bool) {
	if l.n <= 0 {
		return true, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.recent[user][:0]
	for _, at := range l.recent[user] {
		if now.Sub(at) < l.per {
			kept = append(kept, at)
		}
	}
	l.recent[user] = kept
	if len(kept) >= l.n {
		warn = !l.warned[user]
		l.warned[user] = true
		return false, warn
	}
	l.recent[user] = append(kept, now)
	delete(l.warned, user)
	return true, false
}
