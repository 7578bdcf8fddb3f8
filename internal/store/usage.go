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
