package store

import (
	"context"
	"database/sql"
	"fmt"
)

// WorkspaceHosts returns the hosts allowed to each workspace's runs, by
// workspace name, each list sorted.
func (db *DB) WorkspaceHosts(ctx context.Context) (map[string][]string, error) {
	rows, err := db.db.QueryContext(ctx, "SELECT workspace, host FROM workspace_hosts ORDER BY workspace, host")
	if err != nil {
		return nil, fmt.Errorf("store: workspace hosts: %w", describe(err))
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var ws, host string
		if err := rows.Scan(&ws, &host); err != nil {
			return nil, fmt.Errorf("store: workspace hosts: %w", describe(err))
		}
		out[ws] = append(out[ws], host)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: workspace hosts: %w", describe(err))
	}
	return out, nil
}

// HostsOfTx returns the hosts allowed to workspace's runs, sorted, as a
// transaction of the caller's sees them (with its own changes).
func (db *DB) HostsOfTx(ctx context.Context, tx *sql.Tx, workspace string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT host FROM workspace_hosts WHERE workspace = ? ORDER BY host", workspace)
	if err != nil {
		return nil, fmt.Errorf("store: hosts of %s: %w", workspace, describe(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return nil, fmt.Errorf("store: hosts of %s: %w", workspace, describe(err))
		}
		out = append(out, host)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: hosts of %s: %w", workspace, describe(err))
	}
	return out, nil
}

// AllowHost allows host (already checked and canonical) to workspace's
// runs. added is false when it was allowed already.
func (db *DB) AllowHost(ctx context.Context, workspace, host, by string) (added bool, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		added, err = db.AllowHostTx(ctx, tx, workspace, host, by)
		return err
	})
	return added, err
}

// AllowHostTx is AllowHost inside a transaction of the caller's (the one
// that completes the /hosts command).
func (db *DB) AllowHostTx(ctx context.Context, tx *sql.Tx, workspace, host, by string) (added bool, err error) {
	res, err := tx.ExecContext(ctx,
		"INSERT INTO workspace_hosts (workspace, host, added_by, added_at) VALUES (?, ?, ?, ?) ON CONFLICT (workspace, host) DO NOTHING",
		workspace, host, by, FormatTime(db.Now()))
	if err != nil {
		return false, fmt.Errorf("store: allow host %s: %w", host, describe(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// DisallowHost removes host from workspace's hosts. removed is false when
// it was not there.
func (db *DB) DisallowHost(ctx context.Context, workspace, host string) (removed bool, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		removed, err = db.DisallowHostTx(ctx, tx, workspace, host)
		return err
	})
	return removed, err
}

// DisallowHostTx is DisallowHost inside a transaction of the caller's.
func (db *DB) DisallowHostTx(ctx context.Context, tx *sql.Tx, workspace, host string) (removed bool, err error) {
	res, err := tx.ExecContext(ctx, "DELETE FROM workspace_hosts WHERE workspace = ? AND host = ?", workspace, host)
	if err != nil {
		return false, fmt.Errorf("store: disallow host %s: %w", host, describe(err))
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
