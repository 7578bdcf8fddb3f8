package conversation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// Scheduler carries out /remind, /schedule and /cron for a conversation,
// inside the transaction that marks the command's message handled
// (store.DB.CompleteWith). The reply explains what was done or refused (a
// full quota, an unknown id); after is called once the transaction
// committed (it wakes the scheduler) and never blocks; an error is a
// failure of Fetch's own and rolls the whole transaction back.
type Scheduler interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// Watcher carries out /watch on|off for a conversation, like Scheduler;
// its after starts or stops the workspace's watcher.
type Watcher interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// Checks shows or changes a workspace's checks (/checks), like
// Scheduler.
type Checks interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// applier is what Scheduler and Watcher have in common.
type applier interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// effect is a command's change to the database (a reminder stored, a
// watch removed, the autonomy set), made in the transaction that marks
// the command's message handled: a crash never separates the two, so a
// message replayed after a restart neither repeats the change nor loses
// it.
type effect struct {
	// write makes the change through tx (with its audit entry) and
	// returns the replies and what to do once tx committed (never nil).
	// It does nothing but SQL through tx.
	write func(ctx context.Context, tx *sql.Tx) (replies []chat.Reply, after func(), err error)
}

// effect returns the change an instinct makes to the database, for
// commit: /remind, /schedule and /cron … (the Scheduler), /watch on|off
// (the Watcher), /ship, /use, /allow (the Allowlist), /hosts (the Hosts)
// and /autonomy. ok is
// false for every other instinct.
func (s *session) effect(it item, r instincts.Response) (fx effect, ok bool) {
	switch r.Effect {
	case instincts.Remind, instincts.Schedule, instincts.CronList, instincts.CronRemove, instincts.CronPause, instincts.CronResume:
		return s.applied(it, r, s.m.cfg.Scheduler), true
	case instincts.WatchOn, instincts.WatchOff:
		return s.applied(it, r, s.m.cfg.Watcher), true
	case instincts.ShipMode:
		return s.applied(it, r, s.m.cfg.Shipping), true
	case instincts.UseWorkspace:
		return s.use(it, r), true
	case instincts.AllowAdd, instincts.AllowRemove, instincts.AllowList:
		return s.applied(it, r, s.m.cfg.Allowed), true
	case instincts.HostsList, instincts.HostsAdd, instincts.HostsRemove:
		return s.applied(it, r, s.m.cfg.Hosts), true
	case instincts.AutoMergeShow, instincts.AutoMergeSet:
		return s.applied(it, r, s.m.cfg.AutoMerge), true
	case instincts.Checks:
		return s.applied(it, r, s.m.cfg.Checks), true
	case instincts.SetAutonomy:
		return effect{write: func(ctx context.Context, tx *sql.Tx) ([]chat.Reply, func(), error) {
			if err := s.m.cfg.Store.SetAutonomyTx(ctx, tx, s.c.id, string(r.Autonomy)); err != nil {
				return nil, nil, err
			}
			err := s.m.cfg.Store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: s.c.id, Actor: it.userID, Action: "autonomy", Detail: string(r.Autonomy)})
			return []chat.Reply{chat.Text(r.Reply)}, func() {}, err
		}}, true
	}
	return effect{}, false
}

// applied is the effect of an instinct a Scheduler or Watcher carries out
// (to is nil when this Fetch runs none).
func (s *session) applied(it item, r instincts.Response, to applier) effect {
	if to == nil {
		return effect{write: func(context.Context, *sql.Tx) ([]chat.Reply, func(), error) {
			return []chat.Reply{chat.Text("That is not available in this Fetch.")}, func() {}, nil
		}}
	}
	return effect{write: func(ctx context.Context, tx *sql.Tx) ([]chat.Reply, func(), error) {
		reply, after, err := to.ApplyTx(ctx, tx, s.c.id, it.userID, r)
		if err != nil {
			return nil, nil, err
		}
		err = s.m.cfg.Store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: s.c.id, Actor: it.userID, Action: string(r.Effect), Detail: reply})
		return []chat.Reply{chat.Text(reply)}, after, err
	}}
}

// effectError marks a failure of the effect itself, as opposed to one of
// storing the message's completion around it.
type effectError struct{ err error }

func (e effectError) Error() string { return e.err.Error() }
func (e effectError) Unwrap() error { return e.err }

// commit marks it's message handled with fx's change, its audit entry and
// its replies queued in the outbox, all in one transaction
// (store.DB.CompleteWith), then runs fx's after hook. It returns the
// replies stored (their outbox IDs set) but not delivered: the caller
// queues them on the outbox and must not store them again.
//
// When the change fails (a failure of Fetch's own), nothing of it is kept:
// the message is completed with the error's reply instead, and that reply
// is returned. An error means the message was not completed here: it was
// handled before (store.ErrConflict: a replay; nothing to deliver), or the
// store failed, and the message stays unhandled for the next start.
func (s *session) commit(ctx context.Context, it item, fx effect) ([]chat.Reply, error) {
	var replies []chat.Reply
	var after func()
	ids, err := s.m.cfg.Store.CompleteWith(ctx, it.msgID, func(tx *sql.Tx) ([]store.Outgoing, error) {
		var err error
		replies, after, err = fx.write(ctx, tx)
		if err != nil {
			return nil, effectError{err}
		}
		return encodeAll(replies)
	})
	var failed effectError
	if errors.As(err, &failed) {
		s.m.log.Error("apply command", "conversation", s.c.id, "message", it.msgID, "err", failed.err)
		replies, after = []chat.Reply{chat.Text(ErrorMessage(failed.err))}, func() {}
		var out []store.Outgoing
		if out, err = encodeAll(replies); err == nil {
			ids, err = s.m.cfg.Store.Complete(ctx, it.msgID, out)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("conversation: complete command: %w", err)
	}
	after()
	for i := range replies {
		replies[i].ID = ids[i]
	}
	return replies, nil
}

func encodeAll(replies []chat.Reply) ([]store.Outgoing, error) {
	out := make([]store.Outgoing, len(replies))
	for i, r := range replies {
		var err error
		if out[i], err = encode(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
