package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Retention: what Prune removes once it is older than the cut-off and
// done with. The audit log is never pruned: it is the record of what
// Fetch decided and did (approvals, merges, pushes), small, and kept for
// as long as the database is.
//
//   - messages delivered: inbound ones handled, outbound ones sent (the
//     inbox and the outbox keep what is still to do);
//   - the agent's turns already folded into a summary or cleared by
//     /clear (their messages go with them);
//   - the events of tasks that ended (queued, running and waiting tasks
//     keep theirs, however old);
//   - the patches of tasks that ended (the task keeps its summary, files,
//     commits and branch; the caller removes the patch files).
//
// Each is a condition over one table, counted for a dry run and deleted
// otherwise.
var prunable = []struct {
	what  string
	table string
	where string
}{
	{"messages", "messages", "created_at < ?1 AND ((direction = 'in' AND handled_at IS NOT NULL) OR (direction = 'out' AND sent_at IS NOT NULL))"},
	{"agent turns", "agent_turns", "created_at < ?1 AND (compacted = 1 OR cleared = 1)"},
	{"task events", "task_events", "task_id IN (SELECT id FROM tasks WHERE " + endedBefore + ")"},
}

// endedBefore is a task that ended before ?1.
const endedBefore = "ended_at IS NOT NULL AND ended_at < ?1 AND state NOT IN ('queued', 'running', 'waiting_input')"

// Pruned is what Prune removed, or with dry would remove.
type Pruned struct {
	// Counts are the rows per kind ("messages", "agent turns", "task
	// events", "patches").
	Counts map[string]int
	// PatchTasks are the tasks whose patches went: their patch files are
	// the caller's to remove.
	PatchTasks []string
}

// Prune removes what is older than before and done with (see prunable),
// in one transaction; with dry it only counts. The audit log is kept.
func (db *DB) Prune(ctx context.Context, before time.Time, dry bool) (Pruned, error) {
	p := Pruned{Counts: map[string]int{}}
	cut := FormatTime(before)
	err := db.tx(ctx, func(tx *sql.Tx) error {
		for _, k := range prunable {
			n, err := pruneRows(ctx, tx, k.table, k.where, cut, dry)
			if err != nil {
				return fmt.Errorf("%s: %w", k.what, err)
			}
			p.Counts[k.what] = n
		}
		patched := "SELECT id FROM tasks WHERE " + endedBefore + " AND (patch != '' OR patch_path != '')"
		if !dry {
			patched = "UPDATE tasks SET patch = '', patch_path = '' WHERE " + endedBefore + " AND (patch != '' OR patch_path != '') RETURNING id"
		}
		rows, err := tx.QueryContext(ctx, patched, cut)
		if err != nil {
			return fmt.Errorf("patches: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("patches: %w", err)
			}
			p.PatchTasks = append(p.PatchTasks, id)
		}
		p.Counts["patches"] = len(p.PatchTasks)
		return rows.Err()
	})
	if err != nil {
		return Pruned{}, fmt.Errorf("store: prune: %w", describe(err))
	}
	return p, nil
}

func pruneRows(ctx context.Context, tx *sql.Tx, table, where, cut string, dry bool) (int, error) {
	if dry {
		var n int
		err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where, cut).Scan(&n)
		return n, err
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE "+where, cut)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
