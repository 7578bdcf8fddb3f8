package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ModeState is a conversation's current mode.
type ModeState struct {
	ConversationID string
	Mode           string
	// Previous is the mode before the current one, kept so that an
	// approval can return where the conversation was.
	Previous string
	Reason   string
	Since    time.Time
}

// ModeChange is one transition of a conversation's mode.
type ModeChange struct {
	ConversationID string
	// From is the mode the change was decided on; empty for the very first
	// mode of a conversation. If the stored mode is no longer From, the
	// change is refused with ErrConflict.
	From   string
	To     string
	Event  string
	Reason string
	At     time.Time
}

// Mode returns a conversation's current mode, or ErrNotFound when it never
// had one.
func (db *DB) Mode(ctx context.Context, conversationID string) (ModeState, error) {
	var s ModeState
	var since string
	err := db.db.QueryRowContext(ctx,
		"SELECT conversation_id, mode, previous, reason, since FROM modes WHERE conversation_id = ?", conversationID).
		Scan(&s.ConversationID, &s.Mode, &s.Previous, &s.Reason, &since)
	if errors.Is(err, sql.ErrNoRows) {
		return ModeState{}, fmt.Errorf("store: mode of %s: %w", conversationID, ErrNotFound)
	}
	if err != nil {
		return ModeState{}, fmt.Errorf("store: mode of %s: %w", conversationID, describe(err))
	}
	s.Since = parseTime(since)
	return s, nil
}

// ChangeMode stores a transition and the new current mode in one
// transaction.
func (db *DB) ChangeMode(ctx context.Context, c ModeChange) error {
	at := FormatTime(c.At)
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var current string
		err := tx.QueryRowContext(ctx, "SELECT mode FROM modes WHERE conversation_id = ?", c.ConversationID).Scan(&current)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			current = ""
		case err != nil:
			return err
		}
		if current != c.From {
			return fmt.Errorf("mode is %q, not %q: %w", current, c.From, ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO modes (conversation_id, mode, previous, reason, since) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET mode = excluded.mode, previous = excluded.previous, reason = excluded.reason, since = excluded.since`,
			c.ConversationID, c.To, c.From, c.Reason, at)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			"INSERT INTO mode_history (conversation_id, from_mode, to_mode, event, reason, at) VALUES (?, ?, ?, ?, ?, ?)",
			c.ConversationID, c.From, c.To, c.Event, c.Reason, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: change mode of %s to %s: %w", c.ConversationID, c.To, describe(err))
	}
	return nil
}

// ModeHistory lists a conversation's transitions, oldest first.
func (db *DB) ModeHistory(ctx context.Context, conversationID string) ([]ModeChange, error) {
	rows, err := db.db.QueryContext(ctx,
		"SELECT conversation_id, from_mode, to_mode, event, reason, at FROM mode_history WHERE conversation_id = ? ORDER BY id", conversationID)
	if err != nil {
		return nil, fmt.Errorf("store: mode history of %s: %w", conversationID, describe(err))
	}
	defer rows.Close()
	var out []ModeChange
	for rows.Next() {
		var c ModeChange
		var at string
		if err := rows.Scan(&c.ConversationID, &c.From, &c.To, &c.Event, &c.Reason, &at); err != nil {
			return nil, fmt.Errorf("store: mode history of %s: %w", conversationID, describe(err))
		}
		c.At = parseTime(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: mode history of %s: %w", conversationID, describe(err))
	}
	return out, nil
}

// ModesIn lists the conversations whose current mode is one of modes.
func (db *DB) ModesIn(ctx context.Context, modes ...string) ([]ModeState, error) {
	var out []ModeState
	for _, mode := range modes {
		rows, err := db.db.QueryContext(ctx,
			"SELECT conversation_id, mode, previous, reason, since FROM modes WHERE mode = ? ORDER BY conversation_id", mode)
		if err != nil {
			return nil, fmt.Errorf("store: modes in %v: %w", modes, describe(err))
		}
		for rows.Next() {
			var s ModeState
			var since string
			if err := rows.Scan(&s.ConversationID, &s.Mode, &s.Previous, &s.Reason, &since); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: modes in %v: %w", modes, describe(err))
			}
			s.Since = parseTime(since)
			out = append(out, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: modes in %v: %w", modes, describe(err))
		}
	}
	return out, nil
}
