package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// Table names.
const (
	tasksTable  = "tasks"
	eventsTable = "task_events"
)

const taskColumns = `id, conversation_id, workspace, goal, harness, state, worktree, branch, base, base_branch,
	session_id, question, answer, run_id, runs, summary, error, exit_code, stderr_tail, files, commits,
	patch, patch_path, cost_usd, cli_cost_usd, cost_unknown, cost_priced_as, pushed, pr_number, pr_url, pr_state, ship_error, pr_reviews, cancel_requested, timed_out, owner, timeout_ms, created_at,
	COALESCE(started_at, ''), COALESCE(run_started_at, ''), COALESCE(ended_at, ''), updated_at, model, attachments, ship_as, checks, pr_draft, budget_usd, at_budget`

type scanner interface{ Scan(...any) error }

func scanTask(s scanner) (Task, error) {
	var t Task
	var files, commits, created, started, runStarted, ended, updated, atts string
	var timeoutMS int64
	err := s.Scan(&t.ID, &t.ConversationID, &t.Workspace, &t.Goal, &t.Harness, &t.State, &t.Worktree, &t.Branch, &t.Base, &t.BaseBranch,
		&t.SessionID, &t.Question, &t.Answer, &t.RunID, &t.Runs, &t.Summary, &t.Error, &t.ExitCode, &t.StderrTail, &files, &commits,
		&t.Patch, &t.PatchPath, &t.CostUSD, &t.CLICostUSD, &t.CostUnknown, &t.CostPricedAs, &t.Pushed, &t.PR.Number, &t.PR.URL, &t.PR.State, &t.ShipError, &t.PRReviews, &t.CancelRequested, &t.TimedOut, &t.Owner, &timeoutMS, &created, &started, &runStarted, &ended, &updated, &t.Model, &atts, &t.ShipAs, &t.Checks, &t.PR.Draft, &t.BudgetUSD, &t.AtBudget)
	if err != nil {
		return Task{}, err
	}
	if err := json.Unmarshal([]byte(files), &t.Files); err != nil {
		return Task{}, fmt.Errorf("files of %s: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(commits), &t.Commits); err != nil {
		return Task{}, fmt.Errorf("commits of %s: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(atts), &t.Attachments); err != nil {
		return Task{}, fmt.Errorf("attachments of %s: %w", t.ID, err)
	}
	t.Mode = Work
	if t.Branch == "" {
		t.Mode = Ask
	}
	t.Timeout = time.Duration(timeoutMS) * time.Millisecond
	t.CreatedAt = parseTime(created)
	t.StartedAt = parseTime(started)
	t.RunStartedAt = parseTime(runStarted)
	t.EndedAt = parseTime(ended)
	t.UpdatedAt = parseTime(updated)
	return t, nil
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := store.ParseTime(s)
	return t
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return store.FormatTime(t)
}

// get reads one task.
func (e *Engine) get(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string) (Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, "SELECT "+taskColumns+" FROM "+tasksTable+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	t.CapUSD = e.budgetOf(t)
	return t, err
}

// Filter selects tasks for List.
type Filter struct {
	ConversationID string
	Workspace      string
	// States, when set, keeps only tasks in one of them.
	States []State
	// Limit bounds the result to the newest tasks; 0 means 100.
	Limit int
}

func (e *Engine) list(ctx context.Context, f Filter) ([]Task, error) {
	where := []string{"1 = 1"}
	var args []any
	if f.ConversationID != "" {
		where, args = append(where, "conversation_id = ?"), append(args, f.ConversationID)
	}
	if f.Workspace != "" {
		where, args = append(where, "workspace = ?"), append(args, f.Workspace)
	}
	if len(f.States) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(f.States)), ", ")
		where = append(where, "state IN ("+marks+")")
		for _, s := range f.States {
			args = append(args, string(s))
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	return e.query(ctx, "WHERE "+strings.Join(where, " AND ")+" ORDER BY created_at DESC, id DESC LIMIT ?", args...)
}

// query reads the tasks a WHERE … clause selects.
func (e *Engine) query(ctx context.Context, clause string, args ...any) ([]Task, error) {
	rows, err := e.db.QueryContext(ctx, "SELECT "+taskColumns+" FROM "+tasksTable+" "+clause, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		t.CapUSD = e.budgetOf(t)
		out = append(out, t)
	}
	return out, rows.Err()
}

// insert stores a new task and its first state event.
func (e *Engine) insert(ctx context.Context, tx *sql.Tx, t Task) error {
	now := store.FormatTime(t.CreatedAt)
	_, err := tx.ExecContext(ctx, `INSERT INTO `+tasksTable+` (id, conversation_id, workspace, goal, harness, state, branch, timeout_ms, created_at, started_at, updated_at, model, attachments, ship_as)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ConversationID, t.Workspace, t.Goal, t.Harness, string(t.State), t.Branch, t.Timeout.Milliseconds(), now, nullTime(t.StartedAt), now, t.Model, attachmentsJSON(t.Attachments), string(t.ShipAs))
	if err != nil {
		return err
	}
	return appendState(ctx, tx, t.ID, t.CreatedAt, "", t.State, "created")
}

// attributedCost is the cost of the orchestrator's LLM calls attributed to
// the task whose id is its one argument; cost_usd is always cli_cost_usd
// plus it (store.AttributeUsage keeps the same sum).
const attributedCost = "COALESCE((SELECT SUM(cost) FROM llm_usage WHERE task_id = ?), 0)"

// attributed is the cost of the orchestrator's LLM calls attributed to
// task id (0 when it cannot be read: the check at the budget is then the
// CLI's cost alone, and the error is logged).
func (e *Engine) attributed(ctx context.Context, id string) float64 {
	var cost float64
	if err := e.db.QueryRowContext(ctx, "SELECT "+attributedCost, id).Scan(&cost); err != nil {
		e.log.Error("read the LLM cost attributed to a task", "task", id, "err", err)
	}
	return cost
}

// save writes t's mutable columns, moving it from state from to t.State,
// and appends the transition to its event log, in one transaction. It
// fails with ErrState when the stored state is no longer from (another
// process moved it first). cancel_requested is never written here: only
// Cancel sets it.
func (e *Engine) save(ctx context.Context, t Task, from State, reason string) error {
	if t.State != from && !canMove(from, t.State) {
		return fmt.Errorf("task %s: %s → %s: %w", t.ID, from, t.State, ErrState)
	}
	files, _ := json.Marshal(orEmpty(t.Files))
	commits, _ := json.Marshal(orEmpty(t.Commits))
	t.UpdatedAt = e.now()
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE `+tasksTable+` SET state = ?, worktree = ?, branch = ?, base = ?, base_branch = ?,
			session_id = ?, question = ?, answer = ?, run_id = ?, runs = ?, summary = ?, error = ?, exit_code = ?, stderr_tail = ?,
			files = ?, commits = ?, patch = ?, patch_path = ?, cli_cost_usd = ?, cost_unknown = ?, cost_priced_as = ?, cost_usd = ? + `+attributedCost+`, pushed = ?, pr_number = ?, pr_url = ?, pr_state = ?, ship_error = ?, pr_reviews = ?, timed_out = ?, owner = ?, started_at = ?, run_started_at = ?, ended_at = ?, updated_at = ?, model = ?, attachments = ?, checks = ?, pr_draft = ?, budget_usd = ?, at_budget = ?
			WHERE id = ? AND state = ?`,
			string(t.State), t.Worktree, t.Branch, t.Base, t.BaseBranch,
			t.SessionID, t.Question, t.Answer, t.RunID, t.Runs, t.Summary, t.Error, t.ExitCode, t.StderrTail,
			string(files), string(commits), t.Patch, t.PatchPath, t.CLICostUSD, t.CostUnknown, t.CostPricedAs, t.CLICostUSD, t.ID, t.Pushed, t.PR.Number, t.PR.URL, t.PR.State, t.ShipError, t.PRReviews, t.TimedOut, t.Owner, nullTime(t.StartedAt), nullTime(t.RunStartedAt), nullTime(t.EndedAt), store.FormatTime(t.UpdatedAt), t.Model, attachmentsJSON(t.Attachments), t.Checks, t.PR.Draft, t.BudgetUSD, t.AtBudget && t.State == WaitingInput,
			t.ID, string(from))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("task %s is no longer %s: %w", t.ID, from, ErrState)
		}
		if t.State == from {
			return nil
		}
		return appendState(ctx, tx, t.ID, t.UpdatedAt, from, t.State, reason)
	})
	if err != nil {
		return fmt.Errorf("task: save %s: %w", t.ID, err)
	}
	return nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// stateEvent is the data of a state transition in the event log.
type stateEvent struct {
	From   State  `json:"from,omitempty"`
	To     State  `json:"to"`
	Reason string `json:"reason,omitempty"`
}

// kindState marks state transitions in the event log.
const kindState = "state"

func appendState(ctx context.Context, tx *sql.Tx, id string, at time.Time, from, to State, reason string) error {
	data, _ := json.Marshal(stateEvent{From: from, To: to, Reason: reason})
	_, err := tx.ExecContext(ctx, "INSERT INTO "+eventsTable+" (task_id, at, kind, data) VALUES (?, ?, ?, ?)", id, store.FormatTime(at), kindState, string(data))
	return err
}

// isBusyConflict tells the unique index on busy workspaces refusing a
// second active task.
func isBusyConflict(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}

// tx runs fn in a transaction. Other writers (other tasks, other Fetch
// processes) may hold the database longer than its busy timeout; then the
// transaction is retried, a few times, rather than given up.
func (e *Engine) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	backoff := writeBackoff
	for attempt := 1; ; attempt++ {
		err := e.store.Tx(ctx, fn)
		if err == nil || !isLocked(err) || attempt == maxWriteAttempts {
			return err
		}
		e.log.Warn("database busy; retrying", "attempt", attempt)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, time.Second)
	}
}

// isLocked tells an error of a database busy with another writer.
func isLocked(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}
