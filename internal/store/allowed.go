package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// AllowedUser is someone the owner allowed to talk to Fetch on a channel
// (/allow add).
type AllowedUser struct {
	Channel string
	UserID  string
	AddedBy string
	AddedAt time.Time
}

// AllowedUsers lists the users allowed on channel, oldest first.
func (db *DB) AllowedUsers(ctx context.Context, channel string) ([]AllowedUser, error) {
	rows, err := db.db.QueryContext(ctx,
		"SELECT channel, user_id, added_by, added_at FROM allowed_users WHERE channel = ? ORDER BY added_at, user_id", channel)
	if err != nil {
		return nil, fmt.Errorf("store: allowed users: %w", describe(err))
	}
	defer rows.Close()
	var out []AllowedUser
	for rows.Next() {
		var u AllowedUser
		var at string
		if err := rows.Scan(&u.Channel, &u.UserID, &u.AddedBy, &at); err != nil {
			return nil, fmt.Errorf("store: allowed users: %w", describe(err))
		}
		u.AddedAt = parseTime(at)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: allowed users: %w", describe(err))
	}
	return out, nil
}

// AllowUserTx records u as allowed, inside a transaction of the caller's
// (the one that completes the /allow command). added is false when u was
// allowed already (nothing changes).
func (db *DB) AllowUserTx(ctx context.Context, tx *sql.Tx, u AllowedUser) (added bool, err error) {
	at := u.AddedAt
	if at.IsZero() {
		at = db.Now()
	}
	res, err := tx.ExecContext(ctx,
		"INSERT INTO allowed_users (channel, user_id, added_by, added_at) VALUES (?, ?, ?, ?) ON CONFLICT (channel, user_id) DO NOTHING",
		u.Channel, u.UserID, u.AddedBy, FormatTime(at))
	if err != nil {
		return false, fmt.Errorf("store: allow %s: %w", u.UserID, describe(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// DisallowUserTx removes a user from the allowed ones on channel, inside
// a transaction of the caller's. removed is false when they were not
// there.
func (db *DB) DisallowUserTx(ctx context.Context, tx *sql.Tx, channel, userID string) (removed bool, err error) {
	res, err := tx.ExecContext(ctx, "DELETE FROM allowed_users WHERE channel = ? AND user_id = ?", channel, userID)
	if err != nil {
		return false, fmt.Errorf("store: disallow %s: %w", userID, describe(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
