package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PolicyRule is a rule the owner remembered for the coding CLI's
// permission requests in a workspace (see internal/policy for what Tool
// and Pattern mean; the store keeps them as given).
type PolicyRule struct {
	ID        int64
	Workspace string
	// TaskID is the task the rule is for ("Allow for this task"); empty
	// for a rule of the whole workspace ("Always allow in this workspace").
	TaskID    string
	Tool      string
	Pattern   string
	CreatedBy string
	CreatedAt time.Time
}

// AddPolicyRule records r and returns its id. A rule that exists already
// (same workspace, task, tool and pattern) is not added twice: its id is
// returned with added false.
func (db *DB) AddPolicyRule(ctx context.Context, r PolicyRule) (id int64, added bool, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		id, added, err = db.AddPolicyRuleTx(ctx, tx, r)
		return err
	})
	return id, added, err
}

// AddPolicyRuleTx is AddPolicyRule inside a transaction of the caller's
// (the one that records the owner's click in the audit too).
func (db *DB) AddPolicyRuleTx(ctx context.Context, tx *sql.Tx, r PolicyRule) (id int64, added bool, err error) {
	if r.Workspace == "" || r.Tool == "" || r.Pattern == "" || r.CreatedBy == "" {
		return 0, false, fmt.Errorf("store: add policy rule: workspace, tool, pattern and who added it are required")
	}
	at := r.CreatedAt
	if at.IsZero() {
		at = db.Now()
	}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO policy_rules (workspace, task_id, tool, pattern, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)
		 ON CONFLICT (workspace, task_id, tool, pattern) DO NOTHING`,
		r.Workspace, r.TaskID, r.Tool, r.Pattern, r.CreatedBy, FormatTime(at))
	if err != nil {
		return 0, false, fmt.Errorf("store: add policy rule: %w", describe(err))
	}
	if n, _ := res.RowsAffected(); n > 0 {
		id, err = res.LastInsertId()
		if err != nil {
			return 0, false, fmt.Errorf("store: add policy rule: %w", describe(err))
		}
		return id, true, nil
	}
	err = tx.QueryRowContext(ctx,
		"SELECT id FROM policy_rules WHERE workspace = ? AND task_id = ? AND tool = ? AND pattern = ?",
		r.Workspace, r.TaskID, r.Tool, r.Pattern).Scan(&id)
	if err != nil {
		return 0, false, fmt.Errorf("store: add policy rule: %w", describe(err))
	}
	return id, false, nil
}

// PolicyRules lists the rules that apply to a task of workspace: the
// workspace's own and, when taskID is not empty, those of that task.
// Oldest first.
func (db *DB) PolicyRules(ctx context.Context, workspace, taskID string) ([]PolicyRule, error) {
	rows, err := db.db.QueryContext(ctx,
		`SELECT id, workspace, task_id, tool, pattern, created_by, created_at FROM policy_rules
		 WHERE workspace = ? AND (task_id = '' OR task_id = ?) ORDER BY id`, workspace, taskID)
	if err != nil {
		return nil, fmt.Errorf("store: policy rules: %w", describe(err))
	}
	defer rows.Close()
	var out []PolicyRule
	for rows.Next() {
		var r PolicyRule
		var at string
		if err := rows.Scan(&r.ID, &r.Workspace, &r.TaskID, &r.Tool, &r.Pattern, &r.CreatedBy, &at); err != nil {
			return nil, fmt.Errorf("store: policy rules: %w", describe(err))
		}
		r.CreatedAt = parseTime(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: policy rules: %w", describe(err))
	}
	return out, nil
}

// PolicyRule reads one rule; ErrNotFound when there is none with that id.
func (db *DB) PolicyRule(ctx context.Context, id int64) (PolicyRule, error) {
	var r PolicyRule
	var at string
	err := db.db.QueryRowContext(ctx,
		"SELECT id, workspace, task_id, tool, pattern, created_by, created_at FROM policy_rules WHERE id = ?", id).
		Scan(&r.ID, &r.Workspace, &r.TaskID, &r.Tool, &r.Pattern, &r.CreatedBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return PolicyRule{}, fmt.Errorf("store: policy rule %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return PolicyRule{}, fmt.Errorf("store: policy rule %d: %w", id, describe(err))
	}
	r.CreatedAt = parseTime(at)
	return r, nil
}

// RemovePolicyRuleTx removes the rule id of workspace (/policy remove ID),
// inside a transaction of the caller's. ErrNotFound when workspace has no
// rule with that id: a rule of another workspace is never removed
// through this one.
func (db *DB) RemovePolicyRuleTx(ctx context.Context, tx *sql.Tx, workspace string, id int64) (PolicyRule, error) {
	var r PolicyRule
	var at string
	err := tx.QueryRowContext(ctx,
		`DELETE FROM policy_rules WHERE id = ? AND workspace = ?
		 RETURNING id, workspace, task_id, tool, pattern, created_by, created_at`, id, workspace).
		Scan(&r.ID, &r.Workspace, &r.TaskID, &r.Tool, &r.Pattern, &r.CreatedBy, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return PolicyRule{}, fmt.Errorf("store: remove policy rule %d of %s: %w", id, workspace, ErrNotFound)
	}
	if err != nil {
		return PolicyRule{}, fmt.Errorf("store: remove policy rule %d: %w", id, describe(err))
	}
	r.CreatedAt = parseTime(at)
	return r, nil
}

// RemovePolicyRule is RemovePolicyRuleTx in a transaction of its own.
func (db *DB) RemovePolicyRule(ctx context.Context, workspace string, id int64) (r PolicyRule, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		r, err = db.RemovePolicyRuleTx(ctx, tx, workspace, id)
		return err
	})
	return r, err
}

// EndTaskPolicyRules removes the "for this task" rules of a task that
// ended and says how many there were.
func (db *DB) EndTaskPolicyRules(ctx context.Context, taskID string) (int, error) {
	if taskID == "" {
		return 0, nil
	}
	res, err := db.db.ExecContext(ctx, "DELETE FROM policy_rules WHERE task_id = ?", taskID)
	if err != nil {
		return 0, fmt.Errorf("store: end task policy rules: %w", describe(err))
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
