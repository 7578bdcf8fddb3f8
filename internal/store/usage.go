package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Usage is what LLM completions cost.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	Cost             float64
}

// Tokens is the total token count.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// Day is the UTC date of t, the unit of daily budgets.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// AddUsage records what one completion cost.
func (db *DB) AddUsage(ctx context.Context, conversationID string, u Usage) error {
	now := db.Now()
	_, err := db.db.ExecContext(ctx,
		"INSERT INTO llm_usage (conversation_id, day, at, prompt_tokens, completion_tokens, cost) VALUES (?, ?, ?, ?, ?, ?)",
		conversationID, Day(now), FormatTime(now), u.PromptTokens, u.CompletionTokens, u.Cost)
	if err != nil {
		return fmt.Errorf("store: add usage: %w", describe(err))
	}
	return nil
}

// AddTaskUsage records what one completion made for task taskID (Fetch's
// review of its change) cost, tied to the task at once: the task's total
// counts it from its next save (tasks.cost_usd = cli_cost_usd + its
// completions).
func (db *DB) AddTaskUsage(ctx context.Context, conversationID, taskID string, u Usage) error {
	now := db.Now()
	_, err := db.db.ExecContext(ctx,
		"INSERT INTO llm_usage (conversation_id, day, at, prompt_tokens, completion_tokens, cost, task_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
		conversationID, Day(now), FormatTime(now), u.PromptTokens, u.CompletionTokens, u.Cost, taskID)
	if err != nil {
		return fmt.Errorf("store: add usage of task %s: %w", taskID, describe(err))
	}
	return nil
}

// Grant is extra budget the owner granted for a day.
type Grant struct {
	Tokens int
	Cost   float64
}

// Spent is what was spent on day (a Day), across all conversations, and
// the extra budget the owner granted for it.
func (db *DB) Spent(ctx context.Context, day string) (spent Usage, granted Grant, err error) {
	var cost sql.NullFloat64
	err = db.db.QueryRowContext(ctx,
		"SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), SUM(cost) FROM llm_usage WHERE day = ?", day).
		Scan(&spent.PromptTokens, &spent.CompletionTokens, &cost)
	if err != nil {
		return Usage{}, Grant{}, fmt.Errorf("store: spent on %s: %w", day, describe(err))
	}
	spent.Cost = cost.Float64
	var gcost sql.NullFloat64
	err = db.db.QueryRowContext(ctx,
		"SELECT COALESCE(SUM(tokens), 0), SUM(cost) FROM budget_grants WHERE day = ?", day).Scan(&granted.Tokens, &gcost)
	if err != nil {
		return Usage{}, Grant{}, fmt.Errorf("store: granted on %s: %w", day, describe(err))
	}
	granted.Cost = gcost.Float64
	return spent, granted, nil
}

// Grant adds extra budget for day.
func (db *DB) Grant(ctx context.Context, day string, tokens int, cost float64) error {
	_, err := db.db.ExecContext(ctx, "INSERT INTO budget_grants (day, tokens, cost, at) VALUES (?, ?, ?, ?)", day, tokens, cost, db.now())
	if err != nil {
		return fmt.Errorf("store: grant budget: %w", describe(err))
	}
	return nil
}

// DaySpend is what day (a Day) cost in dollars, tasks and orchestrator
// together, for the daily budget (FETCH_DAILY_BUDGET_USD): the coding
// CLIs' cost of the tasks created that day (tasks.cli_cost_usd, the whole
// task even when it ran on past midnight) plus every LLM completion of the
// orchestrator that day (llm_usage; the ones attributed to a task are
// counted here, once, not again in the task's).
func (db *DB) DaySpend(ctx context.Context, day string) (float64, error) {
	var tasks, llm float64
	start, err := time.Parse("2006-01-02", day)
	if err != nil {
		return 0, fmt.Errorf("store: day %q: %w", day, err)
	}
	// A range over the stored timestamps (which sort as they read), so
	// that the index on created_at serves it: /status asks on every call.
	err = db.db.QueryRowContext(ctx,
		"SELECT COALESCE(SUM(cli_cost_usd), 0) FROM tasks WHERE created_at >= ? AND created_at < ?",
		FormatTime(start), FormatTime(start.AddDate(0, 0, 1))).Scan(&tasks)
	if err != nil {
		return 0, fmt.Errorf("store: task spend on %s: %w", day, describe(err))
	}
	err = db.db.QueryRowContext(ctx, "SELECT COALESCE(SUM(cost), 0) FROM llm_usage WHERE day = ?", day).Scan(&llm)
	if err != nil {
		return 0, fmt.Errorf("store: LLM spend on %s: %w", day, describe(err))
	}
	return tasks + llm, nil
}

// AttributeUsage ties the LLM completions of conversationID recorded at
// or after since, and not yet tied to a task, to task taskID, and brings
// the task's total (tasks.cost_usd = cli_cost_usd + its completions) up to
// date, in one transaction. The agent calls it when a turn that created a
// task ends: the turn's completions were about that task.
func (db *DB) AttributeUsage(ctx context.Context, conversationID string, since time.Time, taskID string) error {
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE llm_usage SET task_id = ? WHERE conversation_id = ? AND at >= ? AND task_id = ''",
			taskID, conversationID, FormatTime(since)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE tasks SET cost_usd = cli_cost_usd + COALESCE((SELECT SUM(cost) FROM llm_usage WHERE task_id = ?), 0) WHERE id = ?", taskID, taskID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: attribute usage to task %s: %w", taskID, describe(err))
	}
	return nil
}
