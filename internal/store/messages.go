package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Direction tells an inbound message from an outbound one.
type Direction string

const (
	Inbound  Direction = "in"
	Outbound Direction = "out"
)

// Message is a stored message in either direction.
type Message struct {
	ID             int64
	ConversationID string
	Direction      Direction
	// ExternalID is the channel's own id for the message (Discord's message
	// id), used to drop duplicates; empty when the channel has none.
	ExternalID string
	UserID     string
	Body       string
	// Extra is the rest of an outbound message, opaque to the store.
	Extra     string
	CreatedAt time.Time
	HandledAt *time.Time
	SentAt    *time.Time
	// SendAttemptedAt is when an unsent outbound message was last handed
	// to its channel (MarkSending): it may have been delivered.
	SendAttemptedAt *time.Time
	// InHistory is false for messages kept only for bookkeeping (refused,
	// cleared) that must not be shown to the model as history.
	InHistory bool
}

// NewInbound is an inbound message to store before handling it.
type NewInbound struct {
	ConversationID string
	ExternalID     string
	UserID         string
	Body           string
	InHistory      bool
}

// AddInbound stores an inbound message as not yet handled. When a message
// with the same external id was stored before, it returns that message's id
// and dup = true, and stores nothing.
func (db *DB) AddInbound(ctx context.Context, m NewInbound) (id int64, dup bool, err error) {
	var ext any
	if m.ExternalID != "" {
		ext = m.ExternalID
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		if ext != nil {
			err := tx.QueryRowContext(ctx,
				"SELECT id FROM messages WHERE conversation_id = ? AND direction = 'in' AND external_id = ?",
				m.ConversationID, ext).Scan(&id)
			if err == nil {
				dup = true
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		res, err := tx.ExecContext(ctx,
			"INSERT INTO messages (conversation_id, direction, external_id, user_id, body, created_at, in_history) VALUES (?, 'in', ?, ?, ?, ?, ?)",
			m.ConversationID, ext, m.UserID, m.Body, db.now(), m.InHistory)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: add inbound to %s: %w", m.ConversationID, describe(err))
	}
	return id, dup, nil
}

// Outgoing is an outbound message to queue.
type Outgoing struct {
	Body  string
	Extra string
	// Once, when set, is an idempotency key: a second message with the
	// same key in the same conversation is not queued again.
	Once string
}

// Complete marks an inbound message handled and queues its replies in the
// outbox, in one transaction: after a crash either both happened or
// neither did. It returns the outbox ids of the replies, in order.
// Completing a message twice is an ErrConflict.
func (db *DB) Complete(ctx context.Context, inboundID int64, replies []Outgoing) ([]int64, error) {
	return db.CompleteWith(ctx, inboundID, func(*sql.Tx) ([]Outgoing, error) { return replies, nil })
}

// CompleteWith is Complete for a message whose handling changes the
// database (a command's side effect: a reminder stored, a watch removed):
// effect makes the change through tx and returns the replies, and the
// change, the handled mark and the queued replies commit together — after
// a crash all of them happened or none did, so replaying the message
// neither repeats nor loses the change.
//
// The message is claimed first: when it was handled before, effect is not
// run and the error is ErrConflict. When effect (or anything after it)
// fails, nothing is written and the message stays unhandled; effect's
// error is returned wrapped. effect must do nothing but SQL through tx:
// another write of this process would wait for this transaction (see
// writer.go), and work to do once the change is committed (waking a
// goroutine) belongs after CompleteWith returns.
func (db *DB) CompleteWith(ctx context.Context, inboundID int64, effect func(tx *sql.Tx) ([]Outgoing, error)) ([]int64, error) {
	var ids []int64
	err := db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now()
		var conv string
		err := tx.QueryRowContext(ctx,
			"UPDATE messages SET handled_at = ? WHERE id = ? AND direction = 'in' AND handled_at IS NULL RETURNING conversation_id",
			now, inboundID).Scan(&conv)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrConflict
		}
		if err != nil {
			return err
		}
		replies, err := effect(tx)
		if err != nil {
			return err
		}
		ids, err = addOutbound(ctx, tx, conv, now, replies)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: complete message %d: %w", inboundID, describe(err))
	}
	return ids, nil
}

// AddOutbound queues messages that answer no particular inbound message
// (notifications, task progress) in the outbox. The id of a message whose
// Once key was queued before is 0.
func (db *DB) AddOutbound(ctx context.Context, conversationID string, msgs ...Outgoing) ([]int64, error) {
	var ids []int64
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = addOutbound(ctx, tx, conversationID, db.now(), msgs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: add outbound to %s: %w", conversationID, describe(err))
	}
	return ids, nil
}

// addOutbound queues msgs and returns their ids; a message whose Once key
// was queued before gets id 0 and is not queued again.
func addOutbound(ctx context.Context, tx *sql.Tx, conv, now string, msgs []Outgoing) ([]int64, error) {
	ids := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		var once any
		if m.Once != "" {
			once = m.Once
		}
		res, err := tx.ExecContext(ctx,
			"INSERT INTO messages (conversation_id, direction, external_id, body, extra, created_at) VALUES (?, 'out', ?, ?, ?, ?) ON CONFLICT DO NOTHING",
			conv, once, m.Body, m.Extra, now)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			ids = append(ids, 0)
			continue
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// MarkSent records that an outbound message was delivered.
func (db *DB) MarkSent(ctx context.Context, id int64) error {
	_, err := db.db.ExecContext(ctx,
		"UPDATE messages SET sent_at = ? WHERE id = ? AND direction = 'out' AND sent_at IS NULL", db.now(), id)
	if err != nil {
		return fmt.Errorf("store: mark %d sent: %w", id, describe(err))
	}
	return nil
}

// MarkSending records that an outbound message is about to be handed to
// its channel. Until MarkSent, Unsent lists it with SendAttemptedAt set:
// delivered or not, nobody knows (the process stopped between the two, or
// the sent mark failed), and the channel decides whether to send it again
// (one that recognizes its own repeats can; a terminal would print it
// twice). A message sent already is left as it is.
func (db *DB) MarkSending(ctx context.Context, id int64) error {
	_, err := db.db.ExecContext(ctx,
		"UPDATE messages SET send_attempted_at = ? WHERE id = ? AND direction = 'out' AND sent_at IS NULL", db.now(), id)
	if err != nil {
		return fmt.Errorf("store: mark %d sending: %w", id, describe(err))
	}
	return nil
}

// MarkSendFailed takes back MarkSending when the channel reported that the
// send failed: the message counts as never handed over, and goes out
// again at the next start.
func (db *DB) MarkSendFailed(ctx context.Context, id int64) error {
	_, err := db.db.ExecContext(ctx,
		"UPDATE messages SET send_attempted_at = NULL WHERE id = ? AND direction = 'out' AND sent_at IS NULL", id)
	if err != nil {
		return fmt.Errorf("store: mark %d send failed: %w", id, describe(err))
	}
	return nil
}

const messageColumns = "id, conversation_id, direction, COALESCE(external_id, ''), user_id, body, extra, created_at, handled_at, sent_at, send_attempted_at, in_history"

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var created string
		var handled, sent, attempted sql.NullString
		if err := rows.Scan(&m.ID, &m.ConversationID, &m.Direction, &m.ExternalID, &m.UserID, &m.Body, &m.Extra, &created, &handled, &sent, &attempted, &m.InHistory); err != nil {
			return nil, err
		}
		m.CreatedAt = parseTime(created)
		m.HandledAt = parseNullTime(handled)
		m.SentAt = parseNullTime(sent)
		m.SendAttemptedAt = parseNullTime(attempted)
		out = append(out, m)
	}
	return out, rows.Err()
}

func (db *DB) queryMessages(ctx context.Context, op, where string, args ...any) ([]Message, error) {
	rows, err := db.db.QueryContext(ctx, "SELECT "+messageColumns+" FROM messages WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, describe(err))
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, describe(err))
	}
	return ms, nil
}

// Unhandled lists inbound messages stored but not yet handled, oldest
// first, across all conversations.
func (db *DB) Unhandled(ctx context.Context) ([]Message, error) {
	return db.queryMessages(ctx, "unhandled", "direction = 'in' AND handled_at IS NULL ORDER BY id")
}

// Unsent lists outbound messages not yet delivered, oldest first. With a
// non-empty channel, only that channel's conversations are listed. Those
// with SendAttemptedAt set were handed to the channel before (MarkSending)
// and may have been delivered; they stay in the one list so that a
// conversation's replies keep their order, and a caller that does not
// look sends them again, as before attempts were recorded. A caller that
// decides not to send one again settles it with MarkSent.
func (db *DB) Unsent(ctx context.Context, channel string) ([]Message, error) {
	return db.queryMessages(ctx, "unsent",
		"direction = 'out' AND sent_at IS NULL AND (? = '' OR conversation_id IN (SELECT id FROM conversations WHERE channel = ?)) ORDER BY id",
		channel, channel)
}

// History lists the messages of a conversation that count as history,
// oldest first, at most limit of the newest (0: all).
func (db *DB) History(ctx context.Context, conversationID string, limit int) ([]Message, error) {
	if limit <= 0 {
		limit = -1
	}
	return db.queryMessages(ctx, "history",
		"id IN (SELECT id FROM messages WHERE conversation_id = ? AND in_history = 1 ORDER BY id DESC LIMIT ?) ORDER BY id",
		conversationID, limit)
}

// ClearHistory takes every message of the conversation out of the history
// the model sees. The messages themselves stay for the record.
func (db *DB) ClearHistory(ctx context.Context, conversationID string) error {
	_, err := db.db.ExecContext(ctx, "UPDATE messages SET in_history = 0 WHERE conversation_id = ?", conversationID)
	if err != nil {
		return fmt.Errorf("store: clear history of %s: %w", conversationID, describe(err))
	}
	return nil
}

// Refuse stores an inbound message that will not be handled (too long, for
// instance) as already handled and out of history, with its one reply
// queued, in one transaction. body is what is kept of the message. A
// duplicate of an earlier message stores nothing and returns dup = true.
func (db *DB) Refuse(ctx context.Context, m NewInbound, reply Outgoing) (replyID int64, dup bool, err error) {
	var ext any
	if m.ExternalID != "" {
		ext = m.ExternalID
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		now := db.now()
		res, err := tx.ExecContext(ctx,
			`INSERT INTO messages (conversation_id, direction, external_id, user_id, body, created_at, handled_at, in_history)
			 VALUES (?, 'in', ?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING`,
			m.ConversationID, ext, m.UserID, m.Body, now, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			dup = true
			return nil
		}
		ids, err := addOutbound(ctx, tx, m.ConversationID, now, []Outgoing{reply})
		if err != nil {
			return err
		}
		replyID = ids[0]
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: refuse message in %s: %w", m.ConversationID, describe(err))
	}
	return replyID, dup, nil
}
