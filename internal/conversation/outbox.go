package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// encode turns a reply into its outbox form: the text as the body, the
// rest (edit key, buttons, files) as JSON in extra.
func encode(r chat.Reply) (store.Outgoing, error) {
	out := store.Outgoing{Body: r.Text}
	if r.Key == "" && len(r.Actions) == 0 && len(r.Files) == 0 {
		return out, nil
	}
	extra, err := json.Marshal(r)
	if err != nil {
		return store.Outgoing{}, fmt.Errorf("encode reply: %w", err)
	}
	out.Extra = string(extra)
	return out, nil
}

// decode reads an outbox entry back into a reply.
func decode(m store.Message) (chat.Reply, error) {
	var r chat.Reply
	if m.Extra != "" {
		if err := json.Unmarshal([]byte(m.Extra), &r); err != nil {
			return chat.Reply{}, fmt.Errorf("decode outbox %d: %w", m.ID, err)
		}
	}
	r.ID, r.Text = m.ID, m.Body
	return r, nil
}

// outbox delivers the replies stored for conversations, in the order they
// were queued, each conversation by a goroutine of its own (its pump), so
// that nobody who produces a reply waits for a channel: the conversation's
// goroutine, a stop handled on a channel's goroutine, the scheduler and
// the watchers only store a reply and queue it here. A reply is in the
// store before it is queued; one that was not delivered when the process
// ended goes out at the next Open.
type outbox struct {
	store   *store.DB
	senders map[string]chat.Sender
	log     *slog.Logger
	metrics Metrics // nil: nothing counted

	mu     sync.Mutex
	pumps  map[string]*pump
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// newOutbox builds an outbox that delivers through senders, by channel
// name. It starts nothing: call Open.
func newOutbox(db *store.DB, senders map[string]chat.Sender, log *slog.Logger, metrics Metrics) *outbox {
	return &outbox{store: db, senders: senders, log: log, metrics: metrics, pumps: map[string]*pump{}}
}

// Open queues what a previous process left unsent and starts delivering.
func (o *outbox) Open(ctx context.Context) error {
	o.mu.Lock()
	if o.ctx != nil {
		o.mu.Unlock()
		return errors.New("conversation: outbox already open")
	}
	o.ctx, o.cancel = context.WithCancel(context.WithoutCancel(ctx))
	o.mu.Unlock()
	for channel := range o.senders {
		unsent, err := o.store.Unsent(ctx, channel)
		if err != nil {
			return fmt.Errorf("conversation: outbox: %w", err)
		}
		for _, msg := range unsent {
			r, err := decode(msg)
			if err != nil {
				o.log.Error("unreadable outbox entry; dropped", "outbox", msg.ID, "err", err)
				continue
			}
			if msg.SendAttemptedAt != nil && !idempotent(o.senders[channel]) {
				// Handed to a channel that cannot tell whether it went out
				// (the sent mark failed, or the process died during the
				// send): not sent twice.
				o.log.Warn("a reply may not have been delivered before Fetch stopped; not sending it again", "conversation", msg.ConversationID, "outbox", msg.ID)
				if err := o.store.MarkSent(ctx, msg.ID); err != nil {
					return fmt.Errorf("conversation: outbox: %w", err)
				}
				continue
			}
			// Counted when the process that stored it queued it.
			o.queue(msg.ConversationID, channel, "", []chat.Reply{r})
		}
	}
	return nil
}

// Close delivers what is queued until ctx ends, then stops the pumps and
// waits for them. What was not delivered stays in the store for the next
// start.
func (o *outbox) Close(ctx context.Context) error {
	o.mu.Lock()
	o.closed = true
	cancel := o.cancel
	pumps := make([]*pump, 0, len(o.pumps))
	for _, p := range o.pumps {
		pumps = append(pumps, p)
	}
	o.mu.Unlock()
	if cancel == nil {
		return nil
	}
	var err error
	for _, p := range pumps {
		if ferr := p.flush(ctx); ferr != nil && err == nil {
			err = fmt.Errorf("conversation: outbox: close: %w", ferr)
		}
	}
	cancel()
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("conversation: outbox: close: %w", context.Cause(ctx))
		}
	}
	return err
}

// NotifyOnce stores a message for a conversation outside any turn and
// queues it; with a key, a message whose key was queued before in the
// conversation is not queued again.
func (o *outbox) NotifyOnce(ctx context.Context, conversationID, key string, r chat.Reply) error {
	conv, err := o.store.Conversation(ctx, conversationID)
	if err != nil {
		return fmt.Errorf("conversation: notify: %w", err)
	}
	if _, err := o.add(ctx, conv.ID, conv.Channel, key, outNotice, r); err != nil {
		return fmt.Errorf("conversation: notify: %w", err)
	}
	return nil
}

// add stores replies for a conversation (with an idempotency key when key
// is not empty, for the first reply) and queues those that were new, as
// kind (an out* constant).
func (o *outbox) add(ctx context.Context, conversationID, channel, key, kind string, replies ...chat.Reply) ([]chat.Reply, error) {
	out := make([]store.Outgoing, len(replies))
	for i, r := range replies {
		var err error
		if out[i], err = encode(r); err != nil {
			return nil, err
		}
	}
	if key != "" && len(out) > 0 {
		out[0].Once = key
	}
	ids, err := o.store.AddOutbound(ctx, conversationID, out...)
	if err != nil {
		return nil, err
	}
	queued := make([]chat.Reply, 0, len(replies))
	for i, r := range replies {
		if ids[i] == 0 {
			o.log.Debug("notification already queued", "conversation", conversationID, "key", key)
			continue
		}
		r.ID = ids[i]
		queued = append(queued, r)
	}
	o.queue(conversationID, channel, kind, queued)
	return queued, nil
}

// queue hands stored replies to the conversation's pump and counts them
// as kind (an out* constant; "" counts nothing). It never blocks.
func (o *outbox) queue(conversationID, channel, kind string, replies []chat.Reply) {
	if len(replies) == 0 {
		return
	}
	o.pump(conversationID, channel).push(replies)
	if o.metrics != nil && kind != "" {
		o.metrics.MessageOut(kind, len(replies))
	}
}

// Flush waits until everything queued so far for the conversation was
// handed to its channel (or failed and stays in the store).
func (o *outbox) Flush(ctx context.Context, conversationID string) error {
	o.mu.Lock()
	p := o.pumps[conversationID]
	o.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.flush(ctx)
}

// pump returns the conversation's pump, starting its goroutine the first
// time.
func (o *outbox) pump(conversationID, channel string) *pump {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p, ok := o.pumps[conversationID]; ok {
		return p
	}
	p := newPump(conversationID, channel)
	o.pumps[conversationID] = p
	if o.ctx != nil {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			o.run(o.ctx, p)
		}()
	}
	return p
}

// run delivers a conversation's queue until ctx ends.
func (o *outbox) run(ctx context.Context, p *pump) {
	for {
		select {
		case <-ctx.Done():
			p.abandon()
			return
		case <-p.wake:
		}
		for {
			r, ok := p.next()
			if !ok {
				break
			}
			o.deliver(ctx, p, r)
			p.sent()
		}
	}
}

// markRetries bounds the attempts to record that a reply was delivered.
const markRetries = 3

// deliver sends one stored reply and marks it sent. A failed send stays in
// the store for the next start (channels may retry transient failures
// themselves).
func (o *outbox) deliver(ctx context.Context, p *pump, r chat.Reply) {
	sender := o.senders[p.channel]
	if sender == nil {
		o.log.Warn("no sender for channel; replies stay in the outbox", "channel", p.channel, "conversation", p.conv)
		return
	}
	once := !idempotent(sender)
	if once {
		// The attempt is recorded first: a reply whose sent mark fails
		// is not sent again at the next start.
		if err := o.store.MarkSending(ctx, r.ID); err != nil {
			o.log.Error("record a send; the reply waits for the next start", "conversation", p.conv, "outbox", r.ID, "err", err)
			return
		}
	}
	if err := sender.Send(ctx, p.conv, r); err != nil {
		o.log.Error("send reply", "conversation", p.conv, "outbox", r.ID, "err", err)
		if once {
			if err := o.store.MarkSendFailed(context.WithoutCancel(ctx), r.ID); err != nil {
				o.log.Error("record a failed send", "conversation", p.conv, "outbox", r.ID, "err", err)
			}
		}
		return
	}
	var err error
	for range markRetries {
		if err = o.store.MarkSent(context.WithoutCancel(ctx), r.ID); err == nil {
			return
		}
	}
	o.log.Error("mark reply sent", "conversation", p.conv, "outbox", r.ID, "err", err)
}

// Idempotent is implemented by a chat.Sender that recognises a reply it
// delivered before by its outbox id and does not deliver it twice (the
// Discord channel records each part it sent). The outbox sends such a
// reply again at the next start when it is unsure; for other senders it
// records the attempt first and never sends an attempted reply again.
type Idempotent interface {
	Idempotent() bool
}

func idempotent(s chat.Sender) bool {
	i, ok := s.(Idempotent)
	return ok && i.Idempotent()
}

// pump is one conversation's delivery queue.
type pump struct {
	conv, channel string
	wake          chan struct{} // one slot: there is something to send

	mu      sync.Mutex
	queue   []chat.Reply
	busy    bool          // a reply is being sent
	flushed chan struct{} // closed while the queue is empty and nothing is sent
}

func newPump(conv, channel string) *pump {
	flushed := make(chan struct{})
	close(flushed)
	return &pump{conv: conv, channel: channel, wake: make(chan struct{}, 1), flushed: flushed}
}

func (p *pump) push(replies []chat.Reply) {
	p.mu.Lock()
	if len(p.queue) == 0 && !p.busy {
		p.flushed = make(chan struct{})
	}
	p.queue = append(p.queue, replies...)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest queued reply.
func (p *pump) next() (chat.Reply, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return chat.Reply{}, false
	}
	r := p.queue[0]
	p.queue = p.queue[1:]
	p.busy = true
	return r, true
}

// sent ends the delivery of the reply next returned.
func (p *pump) sent() {
	p.mu.Lock()
	p.busy = false
	if len(p.queue) == 0 {
		close(p.flushed)
	}
	p.mu.Unlock()
}

// abandon drops what is queued (it stays in the store) and wakes flushers.
func (p *pump) abandon() {
	p.mu.Lock()
	if len(p.queue) > 0 || p.busy {
		p.queue, p.busy = nil, false
		close(p.flushed)
	}
	p.mu.Unlock()
}

func (p *pump) flush(ctx context.Context) error {
	p.mu.Lock()
	flushed := p.flushed
	p.mu.Unlock()
	select {
	case <-flushed:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
