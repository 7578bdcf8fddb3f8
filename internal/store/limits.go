package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// CLILimit is the latest a coding CLI reported of one of its
// subscription's usage windows (table cli_limits, one row per CLI and
// window).
type CLILimit struct {
	Harness     string
	Name        string
	UsedPercent float64
	Status      string
	ResetsAt    time.Time // zero when unknown
	UpdatedAt   time.Time
}

// SetCLILimits records what a CLI reported of its windows, replacing what
// it reported of the same windows before.
func (db *DB) SetCLILimits(ctx context.Context, ls []CLILimit) error {
	now := db.now()
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		for _, l := range ls {
			resets := ""
			if !l.ResetsAt.IsZero() {
				resets = FormatTime(l.ResetsAt)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO cli_limits (harness, name, used_percent, status, resets_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (harness, name) DO UPDATE SET used_percent = excluded.used_percent, status = excluded.status, resets_at = excluded.resets_at, updated_at = excluded.updated_at`,
				l.Harness, l.Name, l.UsedPercent, l.Status, resets, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: set CLI limits: %w", describe(err))
	}
	return nil
}

// CLILimits lists the latest windows of every CLI (harness "" ) or of
// one, by CLI and window.
func (db *DB) CLILimits(ctx context.Context, harness string) ([]CLILimit, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT harness, name, used_percent, status, resets_at, updated_at FROM cli_limits
		WHERE ? = '' OR harness = ? ORDER BY harness, name`, harness, harness)
	if err != nil {
		return nil, fmt.Errorf("store: CLI limits: %w", describe(err))
	}
	defer rows.Close()
	var out []CLILimit
	for rows.Next() {
		var l CLILimit
		var resets, updated string
		if err := rows.Scan(&l.Harness, &l.Name, &l.UsedPercent, &l.Status, &resets, &updated); err != nil {
			return nil, fmt.Errorf("store: CLI limits: %w", err)
		}
		if resets != "" {
			l.ResetsAt, _ = ParseTime(resets)
		}
		l.UpdatedAt, _ = ParseTime(updated)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: CLI limits: %w", err)
	}
	return out, nil
}
