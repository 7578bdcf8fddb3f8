package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PromptKind is what a prompt waits for.
type PromptKind string

const (
	// Question waits for a free-text answer.
	Question PromptKind = "question"
	// Approval waits for yes or no on a dangerous action.
	Approval PromptKind = "approval"
)

// Prompt is something Fetch asked the owner and waits for.
type Prompt struct {
	ID             int64
	ConversationID string
	Kind           PromptKind
	// Body is what the owner was shown.
	Body string
	// Action is the action an approval would allow, as its owner package
	// encoded it (for example a tool call as JSON).
	Action    string
	CreatedAt time.Time
	ExpiresAt *time.Time
}

// Expired tells whether the prompt has expired at now.
func (p Prompt) Expired(now time.Time) bool {
	return p.ExpiresAt != nil && !now.Before(*p.ExpiresAt)
}

// AddPrompt opens a prompt. A conversation has at most one open prompt: an
// older open one is an ErrConflict.
func (db *DB) AddPrompt(ctx context.Context, p Prompt) (int64, error) {
	var expires any
	if p.ExpiresAt != nil {
		expires = FormatTime(*p.ExpiresAt)
	}
	var id int64
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM prompts WHERE conversation_id = ? AND resolved_at IS NULL", p.ConversationID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("another prompt is open: %w", ErrConflict)
		}
		res, err := tx.ExecContext(ctx,
			"INSERT INTO prompts (conversation_id, kind, body, action, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
			p.ConversationID, p.Kind, p.Body, p.Action, db.now(), expires)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: add prompt to %s: %w", p.ConversationID, describe(err))
	}
	return id, nil
}

// OpenPrompt returns the conversation's open prompt, or ErrNotFound.
func (db *DB) OpenPrompt(ctx context.Context, conversationID string) (Prompt, error) {
	var p Prompt
	var created string
	var expires sql.NullString
	err := db.db.QueryRowContext(ctx,
		"SELECT id, conversation_id, kind, body, action, created_at, expires_at FROM prompts WHERE conversation_id = ? AND resolved_at IS NULL",
		conversationID).Scan(&p.ID, &p.ConversationID, &p.Kind, &p.Body, &p.Action, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Prompt{}, fmt.Errorf("store: open prompt of %s: %w", conversationID, ErrNotFound)
	}
	if err != nil {
		return Prompt{}, fmt.Errorf("store: open prompt of %s: %w", conversationID, describe(err))
	}
	p.CreatedAt = parseTime(created)
	p.ExpiresAt = parseNullTime(expires)
	return p, nil
}

// ResolvePrompt closes an open prompt with its answer. Resolving a prompt
// that is not open is an ErrNotFound, so that an answer acts once.
func (db *DB) ResolvePrompt(ctx context.Context, id int64, answer string) error {
	res, err := db.db.ExecContext(ctx,
		"UPDATE prompts SET resolved_at = ?, answer = ? WHERE id = ? AND resolved_at IS NULL", db.now(), answer, id)
	if err != nil {
		return fmt.Errorf("store: resolve prompt %d: %w", id, describe(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: resolve prompt %d: %w", id, ErrNotFound)
	}
	return nil
}
