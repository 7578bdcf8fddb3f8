package checks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Source is where a workspace's checks come from.
type Source string

const (
	// Detect: the commands are found in the workspace's files at each
	// shipment (the default).
	Detect Source = "detect"
	// Owner: the commands the owner set with /checks set.
	Owner Source = "owner"
	// Off: no checks (/checks off).
	Off Source = "off"
)

// OnFail is what a failing check does to the pull request.
type OnFail string

const (
	// Draft opens (or keeps) the pull request as a draft (the default).
	Draft OnFail = "draft"
	// Hold opens no pull request: the branch waits for the owner's
	// "Ship anyway" or a follow-up that fixes it.
	Hold OnFail = "hold"
)

// ParseOnFail reads an OnFail; "" and unknown words are not.
func ParseOnFail(s string) (OnFail, bool) {
	switch f := OnFail(strings.ToLower(strings.TrimSpace(s))); f {
	case Draft, Hold:
		return f, true
	}
	return "", false
}

// Settings are a workspace's checks as the owner set them.
type Settings struct {
	Workspace string
	Source    Source
	// Commands are the owner's command lines (Source Owner).
	Commands []string
	OnFail   OnFail
}

// querier is the database or a transaction.
type querier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// readSettings reads a workspace's settings through q; the defaults when
// it has none.
func readSettings(ctx context.Context, q querier, ws string) (Settings, error) {
	st := Settings{Workspace: ws, Source: Detect, OnFail: Draft}
	var cmds string
	err := q.QueryRowContext(ctx, `SELECT source, commands, on_fail FROM workspace_checks WHERE workspace = ?`, ws).
		Scan(&st.Source, &cmds, &st.OnFail)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("checks: settings of %s: %w", ws, err)
	}
	if err := json.Unmarshal([]byte(cmds), &st.Commands); err != nil {
		return Settings{}, fmt.Errorf("checks: commands of %s: %w", ws, err)
	}
	return st, nil
}

// writeSettings stores st through tx.
func writeSettings(ctx context.Context, tx *sql.Tx, st Settings, now string) error {
	cmds, err := json.Marshal(orEmpty(st.Commands))
	if err != nil {
		return fmt.Errorf("checks: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO workspace_checks (workspace, source, commands, on_fail, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(workspace) DO UPDATE SET source = excluded.source, commands = excluded.commands, on_fail = excluded.on_fail, updated_at = excluded.updated_at`,
		st.Workspace, string(st.Source), string(cmds), string(st.OnFail), now)
	if err != nil {
		return fmt.Errorf("checks: set the checks of %s: %w", st.Workspace, err)
	}
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
