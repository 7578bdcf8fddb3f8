package discord

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

// state is the Discord channel's own tables (migration 0004_discord):
// the parts of replies Discord accepted, the messages behind edit keys,
// and what buttons send.
type state struct {
	db  *store.DB
	now func() time.Time
}

// sentPart returns the message id recorded for an outbox reply's part,
// "" when it was not sent.
func (s state) sentPart(ctx context.Context, outboxID int64, part int) (string, error) {
	var id string
	err := s.db.SQL().QueryRowContext(ctx, "SELECT message_id FROM discord_sent WHERE outbox_id = ? AND part = ?", outboxID, part).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("discord: sent part %d.%d: %w", outboxID, part, err)
	}
	return id, nil
}

func (s state) recordPart(ctx context.Context, outboxID int64, part int, channelID, messageID string) error {
	_, err := s.db.SQL().ExecContext(ctx,
		"INSERT INTO discord_sent (outbox_id, part, channel_id, message_id, sent_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
		outboxID, part, channelID, messageID, store.FormatTime(s.now()))
	if err != nil {
		return fmt.Errorf("discord: record part %d.%d: %w", outboxID, part, err)
	}
	return nil
}

// keyed is the message behind an edit key.
type keyed struct {
	channelID, key, messageID string
	pending                   string // JSON of the edit to make, "" when none
	editedAt                  time.Time
}

// keyMessage returns the message sent under key in a channel, ok false
// when none was.
func (s state) keyMessage(ctx context.Context, channelID, key string) (keyed, bool, error) {
	k := keyed{channelID: channelID, key: key}
	var pending sql.NullString
	var edited string
	err := s.db.SQL().QueryRowContext(ctx, "SELECT message_id, pending, edited_at FROM discord_keys WHERE channel_id = ? AND key = ?", channelID, key).
		Scan(&k.messageID, &pending, &edited)
	if errors.Is(err, sql.ErrNoRows) {
		return k, false, nil
	}
	if err != nil {
		return k, false, fmt.Errorf("discord: key %s: %w", key, err)
	}
	k.pending = pending.String
	k.editedAt, _ = store.ParseTime(edited)
	return k, true, nil
}

// setKey records the message sent under key (a new one, or after the old
// one was deleted), with no edit pending.
func (s state) setKey(ctx context.Context, channelID, key, messageID string) error {
	_, err := s.db.SQL().ExecContext(ctx,
		`INSERT INTO discord_keys (channel_id, key, message_id, pending, edited_at) VALUES (?, ?, ?, NULL, ?)
		 ON CONFLICT (channel_id, key) DO UPDATE SET message_id = excluded.message_id, pending = NULL, edited_at = excluded.edited_at`,
		channelID, key, messageID, store.FormatTime(s.now()))
	if err != nil {
		return fmt.Errorf("discord: set key %s: %w", key, err)
	}
	return nil
}

// setPending records the newest edit for a key; an older pending one is
// replaced (coalesced).
func (s state) setPending(ctx context.Context, channelID, key, edit string) error {
	_, err := s.db.SQL().ExecContext(ctx, "UPDATE discord_keys SET pending = ? WHERE channel_id = ? AND key = ?", edit, channelID, key)
	if err != nil {
		return fmt.Errorf("discord: queue edit of %s: %w", key, err)
	}
	return nil
}

// pendingEdits lists the keys with an edit waiting.
func (s state) pendingEdits(ctx context.Context) ([]keyed, error) {
	rows, err := s.db.SQL().QueryContext(ctx, "SELECT channel_id, key, message_id, pending, edited_at FROM discord_keys WHERE pending IS NOT NULL ORDER BY edited_at")
	if err != nil {
		return nil, fmt.Errorf("discord: pending edits: %w", err)
	}
	defer rows.Close()
	var out []keyed
	for rows.Next() {
		var k keyed
		var edited string
		if err := rows.Scan(&k.channelID, &k.key, &k.messageID, &k.pending, &edited); err != nil {
			return nil, fmt.Errorf("discord: pending edits: %w", err)
		}
		k.editedAt, _ = store.ParseTime(edited)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("discord: pending edits: %w", err)
	}
	return out, nil
}

// edited records that the pending edit was made, unless a newer one
// replaced it meanwhile.
func (s state) edited(ctx context.Context, k keyed, messageID string) error {
	_, err := s.db.SQL().ExecContext(ctx,
		"UPDATE discord_keys SET pending = CASE WHEN pending = ? THEN NULL ELSE pending END, message_id = ?, edited_at = ? WHERE channel_id = ? AND key = ?",
		k.pending, messageID, store.FormatTime(s.now()), k.channelID, k.key)
	if err != nil {
		return fmt.Errorf("discord: record edit of %s: %w", k.key, err)
	}
	return nil
}

// addButton records what a button sends and returns its id.
func (s state) addButton(ctx context.Context, channelID, send string) (int64, error) {
	res, err := s.db.SQL().ExecContext(ctx, "INSERT INTO discord_buttons (channel_id, send, created_at) VALUES (?, ?, ?)", channelID, send, store.FormatTime(s.now()))
	if err != nil {
		return 0, fmt.Errorf("discord: add button: %w", err)
	}
	return res.LastInsertId()
}

// button returns what the button id sends in a channel, ok false when
// there is no such button there.
func (s state) button(ctx context.Context, channelID string, id int64) (string, bool, error) {
	var send string
	err := s.db.SQL().QueryRowContext(ctx, "SELECT send FROM discord_buttons WHERE id = ? AND channel_id = ?", id, channelID).Scan(&send)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("discord: button %d: %w", id, err)
	}
	return send, true, nil
}
