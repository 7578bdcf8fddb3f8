package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Conversation is one chat with one person on one channel.
type Conversation struct {
	ID        string
	Channel   string
	UserID    string
	Workspace string
	// Autonomy is how much Fetch decides on its own here: "supervised",
	// "cautious" (the default) or "autonomous".
	Autonomy string
	// Model is the coding CLI's model its tasks use (/model); empty for
	// each CLI's default.
	Model     string
	CreatedAt time.Time
}

// EnsureConversation returns the conversation with id, creating it first
// when it does not exist yet.
func (db *DB) EnsureConversation(ctx context.Context, id, channel, userID string) (Conversation, error) {
	_, err := db.db.ExecContext(ctx,
		"INSERT INTO conversations (id, channel, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
		id, channel, userID, db.now())
	if err != nil {
		return Conversation{}, fmt.Errorf("store: ensure conversation %s: %w", id, describe(err))
	}
	return db.Conversation(ctx, id)
}

// Conversation returns the conversation with id, or ErrNotFound.
func (db *DB) Conversation(ctx context.Context, id string) (Conversation, error) {
	var c Conversation
	var created string
	err := db.db.QueryRowContext(ctx,
		"SELECT id, channel, user_id, workspace, autonomy, model, created_at FROM conversations WHERE id = ?", id).
		Scan(&c.ID, &c.Channel, &c.UserID, &c.Workspace, &c.Autonomy, &c.Model, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, fmt.Errorf("store: conversation %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("store: conversation %s: %w", id, describe(err))
	}
	c.CreatedAt = parseTime(created)
	return c, nil
}

// SetWorkspace records the workspace selected in a conversation.
func (db *DB) SetWorkspace(ctx context.Context, id, workspace string) error {
	res, err := db.db.ExecContext(ctx, "UPDATE conversations SET workspace = ? WHERE id = ?", workspace, id)
	if err != nil {
		return fmt.Errorf("store: set workspace of %s: %w", id, describe(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: set workspace of %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetWorkspaceTx is SetWorkspace inside a transaction of the caller's (the
// one CompleteWith runs the /use command's effect in).
func (db *DB) SetWorkspaceTx(ctx context.Context, tx *sql.Tx, id, workspace string) error {
	res, err := tx.ExecContext(ctx, "UPDATE conversations SET workspace = ? WHERE id = ?", workspace, id)
	if err != nil {
		return fmt.Errorf("store: set workspace of %s: %w", id, describe(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: set workspace of %s: %w", id, ErrNotFound)
	}
	return nil
}

// Unselect clears the workspace selection of every conversation that has
// workspace selected (it was deleted) and returns how many there were.
func (db *DB) Unselect(ctx context.Context, workspace string) (int, error) {
	res, err := db.db.ExecContext(ctx, "UPDATE conversations SET workspace = '' WHERE workspace = ?", workspace)
	if err != nil {
		return 0, fmt.Errorf("store: unselect workspace %s: %w", workspace, describe(err))
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// SetAutonomy records how much Fetch decides on its own in a conversation.
func (db *DB) SetAutonomy(ctx context.Context, id, autonomy string) error {
	return db.tx(ctx, func(tx *sql.Tx) error { return db.SetAutonomyTx(ctx, tx, id, autonomy) })
}

// SetAutonomyTx is SetAutonomy inside a transaction of the caller's (the
// one CompleteWith runs the /autonomy command's effect in).
func (db *DB) SetAutonomyTx(ctx context.Context, tx *sql.Tx, id, autonomy string) error {
	res, err := tx.ExecContext(ctx, "UPDATE conversations SET autonomy = ? WHERE id = ?", autonomy, id)
	if err != nil {
		return fmt.Errorf("store: set autonomy of %s: %w", id, describe(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: set autonomy of %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetModel records the coding CLI's model a conversation's tasks use;
// empty for each CLI's default.
func (db *DB) SetModel(ctx context.Context, id, model string) error {
	res, err := db.db.ExecContext(ctx, "UPDATE conversations SET model = ? WHERE id = ?", model, id)
	if err != nil {
		return fmt.Errorf("store: set model of %s: %w", id, describe(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: set model of %s: %w", id, ErrNotFound)
	}
	return nil
}
