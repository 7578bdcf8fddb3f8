package store

import (
	"context"
	"fmt"
)

// TaskCount is how many tasks are in one state with one harness.
type TaskCount struct {
	State   string
	Harness string
	N       int
}

// Gauges is the state the store holds at one moment, as metrics show it:
// every process sharing the database sees the same numbers.
type Gauges struct {
	// Tasks counts tasks by state and harness (pairs with none are left
	// out).
	Tasks []TaskCount
	// OutboxBacklog is the outbound messages not delivered yet.
	OutboxBacklog int
	// ApprovalsPending is the approvals waiting for the owner's answer.
	ApprovalsPending int
}

// Gauges reads the tasks by state and harness, the outbox backlog and the
// open approvals. The last two are counted on partial indexes
// (messages_unsent, prompts_open); the tasks are few.
func (db *DB) Gauges(ctx context.Context) (Gauges, error) {
	var g Gauges
	rows, err := db.db.QueryContext(ctx, "SELECT state, harness, COUNT(*) FROM tasks GROUP BY state, harness ORDER BY state, harness")
	if err != nil {
		return Gauges{}, fmt.Errorf("store: gauges: %w", describe(err))
	}
	defer rows.Close()
	for rows.Next() {
		var c TaskCount
		if err := rows.Scan(&c.State, &c.Harness, &c.N); err != nil {
			return Gauges{}, fmt.Errorf("store: gauges: %w", describe(err))
		}
		g.Tasks = append(g.Tasks, c)
	}
	if err := rows.Err(); err != nil {
		return Gauges{}, fmt.Errorf("store: gauges: %w", describe(err))
	}
	err = db.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages WHERE direction = 'out' AND sent_at IS NULL").Scan(&g.OutboxBacklog)
	if err != nil {
		return Gauges{}, fmt.Errorf("store: gauges: outbox: %w", describe(err))
	}
	err = db.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM prompts WHERE resolved_at IS NULL AND kind = 'approval'").Scan(&g.ApprovalsPending)
	if err != nil {
		return Gauges{}, fmt.Errorf("store: gauges: approvals: %w", describe(err))
	}
	return g, nil
}
