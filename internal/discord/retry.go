package discord

import (
	"context"
	"errors"
	"sort"

	"github.com/fetch-dev/fetch/internal/chat"
)

// failedSend is an outbox reply whose delivery failed.
type failedSend struct {
	conversationID string
	reply          chat.Reply
}

// The conversation runtime leaves a reply it could not deliver in the
// outbox and sends it at its next start. The Bot does not wait that long:
// it keeps the outbox replies that failed in this process and sends them
// again once Discord is reachable again — after the gateway reconnected,
// or after any other send went through — and marks them sent. A reply
// that goes out this way and is replayed at the next start anyway (a
// crash before the mark) is not sent twice: its parts are recorded.

// noteDelivery keeps track of failed outbox replies and wakes the
// retrier after a success.
func (b *Bot) noteDelivery(conversationID string, r chat.Reply, err error) {
	if r.ID == 0 {
		return
	}
	b.mu.Lock()
	if err != nil && transient(err) {
		b.failed[r.ID] = failedSend{conversationID: conversationID, reply: r}
	} else {
		delete(b.failed, r.ID)
	}
	retry := err == nil && len(b.failed) > 0
	b.mu.Unlock()
	if retry {
		b.reachable()
	}
}

// transient tells whether a failed send may succeed later without any
// change: the network or Discord failed, not the request. A refused
// request (a deleted channel) waits for the next start like any other.
func transient(err error) bool {
	if errors.Is(err, ErrNotDiscord) {
		return false
	}
	_, status := restCode(err)
	return status == 0 || status >= 500 || status == 429
}

// reachable tells the retrier that Discord answers again.
func (b *Bot) reachable() {
	select {
	case b.retry <- struct{}{}:
	default:
	}
}

// retrier sends the failed outbox replies again, oldest first, each time
// Discord is reachable again, until ctx ends.
func (b *Bot) retrier(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.retry:
		}
		b.mu.Lock()
		pending := make([]failedSend, 0, len(b.failed))
		for _, f := range b.failed {
			pending = append(pending, f)
		}
		b.mu.Unlock()
		sort.Slice(pending, func(i, j int) bool { return pending[i].reply.ID < pending[j].reply.ID })
		for _, f := range pending {
			err := b.deliver(ctx, f.conversationID[len(conversationPrefix):], b.clean(f.reply))
			if err != nil {
				b.log.Warn("resend failed; it stays in the outbox", "outbox", f.reply.ID, "err", err)
				break
			}
			b.mu.Lock()
			delete(b.failed, f.reply.ID)
			b.mu.Unlock()
			if err := b.cfg.Store.MarkSent(context.WithoutCancel(ctx), f.reply.ID); err != nil {
				b.log.Error("mark resent reply sent", "outbox", f.reply.ID, "err", err)
			}
			b.log.Info("resent a reply that had failed", "outbox", f.reply.ID)
		}
	}
}
