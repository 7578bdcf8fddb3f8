package store

import (
	"context"
	"database/sql"
	"fmt"
)

// OpenPrompts returns every open prompt, oldest first: what a restart
// finds still waiting for an answer.
func (db *DB) OpenPrompts(ctx context.Context) ([]Prompt, error) {
	rows, err := db.db.QueryContext(ctx,
		"SELECT id, conversation_id, kind, body, action, created_at, expires_at FROM prompts WHERE resolved_at IS NULL ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("store: open prompts: %w", describe(err))
	}
	defer rows.Close()
	var ps []Prompt
	for rows.Next() {
		var p Prompt
		var created string
		var expires sql.NullString
		if err := rows.Scan(&p.ID, &p.ConversationID, &p.Kind, &p.Body, &p.Action, &created, &expires); err != nil {
			return nil, fmt.Errorf("store: open prompts: %w", describe(err))
		}
		p.CreatedAt = parseTime(created)
		p.ExpiresAt = parseNullTime(expires)
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: open prompts: %w", describe(err))
	}
	return ps, nil
}
