package review

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

// automergeTable keeps each workspace's limits (migration 0019).
const automergeTable = "workspace_automerge"

// maxPaths bounds the patterns a workspace lists.
const maxPaths = 50

// querier is the database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Settings are the workspaces' limits for merging on their own, as
// /automerge shows and changes them: each workspace's own where it set
// them, the defaults elsewhere. They keep no state of their own (the
// table does) and are safe for concurrent use.
type Settings struct {
	store    *store.DB
	defaults Limits
	now      func() time.Time
}

// NewSettings builds the settings over db with defaults (zero fields
// take DefaultMaxFiles and DefaultMaxLines). It reads nothing yet.
func NewSettings(db *store.DB, defaults Limits, now func() time.Time) *Settings {
	if defaults.MaxFiles <= 0 {
		defaults.MaxFiles = DefaultMaxFiles
	}
	if defaults.MaxLines <= 0 {
		defaults.MaxLines = DefaultMaxLines
	}
	if now == nil {
		now = time.Now
	}
	return &Settings{store: db, defaults: defaults, now: now}
}

// Limits returns workspace ws's limits: its own where it set them, the
// defaults elsewhere.
func (g *Settings) Limits(ctx context.Context, ws string) (Limits, error) {
	return g.limits(ctx, g.store.SQL(), ws)
}

func (g *Settings) limits(ctx context.Context, q querier, ws string) (Limits, error) {
	lim := Limits{MaxFiles: g.defaults.MaxFiles, MaxLines: g.defaults.MaxLines, Paths: slices.Clone(g.defaults.Paths)}
	var files, lines sql.NullInt64
	var paths string
	err := q.QueryRowContext(ctx, "SELECT max_files, max_lines, paths FROM "+automergeTable+" WHERE workspace = ?", ws).Scan(&files, &lines, &paths)
	if errors.Is(err, sql.ErrNoRows) {
		return lim, nil
	}
	if err != nil {
		return Limits{}, fmt.Errorf("review: limits of %s: %w", ws, err)
	}
	if files.Valid {
		lim.MaxFiles = int(files.Int64)
	}
	if lines.Valid {
		lim.MaxLines = int(lines.Int64)
	}
	var own []Pattern
	if err := json.Unmarshal([]byte(paths), &own); err != nil {
		return Limits{}, fmt.Errorf("review: paths of %s: %w", ws, err)
	}
	lim.Paths = append(lim.Paths, own...)
	return lim, nil
}

// ownPaths returns the patterns workspace ws listed itself.
func ownPaths(ctx context.Context, q querier, ws string) ([]Pattern, error) {
	var paths string
	err := q.QueryRowContext(ctx, "SELECT paths FROM "+automergeTable+" WHERE workspace = ?", ws).Scan(&paths)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("review: paths of %s: %w", ws, err)
	}
	var own []Pattern
	if err := json.Unmarshal([]byte(paths), &own); err != nil {
		return nil, fmt.Errorf("review: paths of %s: %w", ws, err)
	}
	return own, nil
}

// set writes one column of ws's row (making the row).
func (g *Settings) set(ctx context.Context, q querier, ws, column string, value any, by string) error {
	now := store.FormatTime(g.now())
	_, err := q.ExecContext(ctx, "INSERT INTO "+automergeTable+" (workspace, "+column+", updated_by, updated_at) VALUES (?, ?, ?, ?)"+
		" ON CONFLICT(workspace) DO UPDATE SET "+column+" = excluded."+column+", updated_by = excluded.updated_by, updated_at = excluded.updated_at",
		ws, value, by, now)
	if err != nil {
		return fmt.Errorf("review: set %s of %s: %w", column, ws, err)
	}
	return nil
}

// Forget drops a deleted workspace's limits.
func (g *Settings) Forget(ctx context.Context, ws string) error {
	if _, err := g.store.SQL().ExecContext(ctx, "DELETE FROM "+automergeTable+" WHERE workspace = ?", ws); err != nil {
		return fmt.Errorf("review: forget %s: %w", ws, err)
	}
	return nil
}

// maxLimit bounds a limit the owner sets.
const maxLimit = 1_000_000

// ApplyTx carries out /automerge (instincts.AutoMergeShow, AutoMergeSet)
// on r.Workspace for the owner userID inside tx, the transaction that
// completes the command's message. A bad value is refused with what is
// expected, and nothing changes. An error is the store's and rolls tx
// back.
func (g *Settings) ApplyTx(ctx context.Context, tx *sql.Tx, _ string, userID string, r instincts.Response) (string, func(), error) {
	none := func() {}
	ws := r.Workspace
	if ws == "" {
		return "", nil, fmt.Errorf("review: %s without a workspace", r.Effect)
	}
	switch r.Effect {
	case instincts.AutoMergeShow:
	case instincts.AutoMergeSet:
		reply, err := g.change(ctx, tx, ws, r.Setting, r.Value, userID)
		if err != nil || reply != "" {
			return reply, none, err
		}
	default:
		return "", nil, fmt.Errorf("review: not an /automerge effect: %q", r.Effect)
	}
	lim, err := g.limits(ctx, tx, ws)
	if err != nil {
		return "", nil, err
	}
	verb := "merges"
	if r.Effect == instincts.AutoMergeSet {
		verb = "now merges"
	}
	return fmt.Sprintf("In an autonomous workspace with /autonomy autonomous, Fetch %s %s's pull requests on its own only when its own review approves and the change touches %s, "+
		"and no CI workflow, lockfile or dependency manifest, or deploy file. Anything else waits for your Merge.", verb, ws, lim), none, nil
}

// change sets one of ws's limits; a reply that is not "" refuses it.
func (g *Settings) change(ctx context.Context, tx *sql.Tx, ws, setting, value, by string) (string, error) {
	switch setting {
	case "files", "lines":
		column := "max_" + setting
		if strings.EqualFold(value, "default") {
			return "", g.set(ctx, tx, ws, column, nil, by)
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 || n > maxLimit {
			return fmt.Sprintf("Nothing changed: %q is not a number of %s from 0 to %d (or \"default\").", value, setting, maxLimit), nil
		}
		return "", g.set(ctx, tx, ws, column, n, by)
	case "add", "remove":
		p, err := ParsePattern(value)
		if err != nil {
			return "Nothing changed: " + strings.TrimPrefix(err.Error(), "review: ") + ". " + patternForms, nil
		}
		own, err := ownPaths(ctx, tx, ws)
		if err != nil {
			return "", err
		}
		has := slices.Contains(own, p)
		switch {
		case setting == "add" && has:
			return fmt.Sprintf("%s is listed for %s already; nothing changed.", p, ws), nil
		case setting == "add" && len(own) >= maxPaths:
			return fmt.Sprintf("Nothing changed: %s lists %d paths, the most it may.", ws, maxPaths), nil
		case setting == "add":
			own = append(own, p)
		case !has:
			return fmt.Sprintf("%s is not among %s's listed paths; nothing changed.", p, ws), nil
		default:
			own = slices.DeleteFunc(own, func(q Pattern) bool { return q == p })
		}
		data, _ := json.Marshal(orEmpty(own))
		return "", g.set(ctx, tx, ws, "paths", string(data), by)
	}
	return "", fmt.Errorf("review: unknown /automerge setting %q", setting)
}

const patternForms = "A path is a directory ending in / (deploy/), a file name that may hold * (*.sql), or a path from the repository's root (db/schema.sql)."

func orEmpty(ps []Pattern) []Pattern {
	if ps == nil {
		return []Pattern{}
	}
	return ps
}
