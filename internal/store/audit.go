package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// AuditEntry records one thing Fetch did.
type AuditEntry struct {
	At             time.Time
	ConversationID string
	Actor          string
	Action         string
	Detail         string
}

// Audit appends an entry to the audit log.
func (db *DB) Audit(ctx context.Context, e AuditEntry) error {
	return db.audit(ctx, db.db, e)
}

// AuditTx appends an entry to the audit log inside a transaction of the
// caller's, so that the entry commits with what it records.
func (db *DB) AuditTx(ctx context.Context, tx *sql.Tx, e AuditEntry) error {
	return db.audit(ctx, tx, e)
}

func (db *DB) audit(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, e AuditEntry) error {
	at := e.At
	if at.IsZero() {
		at = db.Now()
	}
	_, err := x.ExecContext(ctx,
		"INSERT INTO audit (at, conversation_id, actor, action, detail) VALUES (?, ?, ?, ?, ?)",
		FormatTime(at), e.ConversationID, e.Actor, e.Action, e.Detail)
	if err != nil {
		return fmt.Errorf("store: audit %s: %w", e.Action, describe(err))
	}
	return nil
}

// AuditLog lists the audit entries of a conversation (all when empty),
// oldest first.
func (db *DB) AuditLog(ctx context.Context, conversationID string) ([]AuditEntry, error) {
	rows, err := db.db.QueryContext(ctx,
		"SELECT at, conversation_id, actor, action, detail FROM audit WHERE ? = '' OR conversation_id = ? ORDER BY id",
		conversationID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", describe(err))
	}
	out, err := scanAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	return out, nil
}

// scanAudit reads rows of (at, conversation_id, actor, action, detail)
// and closes them.
func scanAudit(rows *sql.Rows) ([]AuditEntry, error) {
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at string
		if err := rows.Scan(&at, &e.ConversationID, &e.Actor, &e.Action, &e.Detail); err != nil {
			return nil, describe(err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, describe(rows.Err())
}

// AuditQuery selects audit entries: those at or after Since (all when
// zero), whose action is Action (any when empty), the newest Limit of
// them (all when 0).
type AuditQuery struct {
	Since  time.Time
	Action string
	Limit  int
}

// AuditEntries lists the entries q selects, oldest first.
func (db *DB) AuditEntries(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	since := ""
	if !q.Since.IsZero() {
		since = FormatTime(q.Since)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := db.db.QueryContext(ctx,
		`SELECT at, conversation_id, actor, action, detail FROM (
		   SELECT id, at, conversation_id, actor, action, detail FROM audit
		   WHERE at >= ?1 AND (?2 = '' OR action = ?2) ORDER BY id DESC LIMIT ?3
		 ) ORDER BY id`,
		since, q.Action, limit)
	if err != nil {
		return nil, fmt.Errorf("store: audit entries: %w", describe(err))
	}
	out, err := scanAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("store: audit entries: %w", err)
	}
	return out, nil
}
