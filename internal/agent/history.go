package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/tokens"
)

const (
	// summaryMax bounds the summary of compacted turns, in bytes; the
	// oldest lines go first.
	summaryMax = 3000
	// summaryLine bounds each side of a turn in the summary.
	summaryLine = 160
)

// saveTurn writes a whole turn in one transaction. A turn that is not in
// a valid order is refused: it would poison every later request.
func (a *Agent) saveTurn(ctx context.Context, conv string, kind intent.Kind, msgs []llm.Message) error {
	if err := validTurn(msgs); err != nil {
		return fmt.Errorf("agent: save turn: %w", err)
	}
	return a.cfg.Store.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO agent_turns (conversation_id, intent, created_at) VALUES (?, ?, ?)",
			conv, string(kind), store.FormatTime(a.now()))
		if err != nil {
			return fmt.Errorf("agent: save turn: %w", err)
		}
		turn, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("agent: save turn: %w", err)
		}
		for _, m := range msgs {
			calls := ""
			if len(m.ToolCalls) > 0 {
				b, err := json.Marshal(m.ToolCalls)
				if err != nil {
					return fmt.Errorf("agent: save turn: %w", err)
				}
				calls = string(b)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO agent_messages (turn_id, role, content, tool_calls, tool_call_id) VALUES (?, ?, ?, ?, ?)",
				turn, string(m.Role), m.Content, calls, m.ToolCallID)
			if err != nil {
				return fmt.Errorf("agent: save turn: %w", err)
			}
		}
		return nil
	})
}

// validTurn checks a turn's order: a user message, then assistant
// messages whose tool calls each get exactly one result before anything
// else, ending with an assistant message without tool calls.
func validTurn(msgs []llm.Message) error {
	if len(msgs) < 2 || msgs[0].Role != llm.User {
		return errors.New("a turn starts with the user's message and has an answer")
	}
	open := map[string]bool{}
	for i, m := range msgs[1:] {
		switch m.Role {
		case llm.Assistant:
			if len(open) > 0 {
				return fmt.Errorf("message %d: assistant before all tool results", i+1)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case llm.ToolRole:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: result for a call that is not open", i+1)
			}
			delete(open, m.ToolCallID)
		default:
			return fmt.Errorf("message %d: unexpected %s message", i+1, m.Role)
		}
	}
	last := msgs[len(msgs)-1]
	if len(open) > 0 || last.Role != llm.Assistant || len(last.ToolCalls) > 0 {
		return errors.New("a turn ends with the assistant's answer")
	}
	return nil
}

// window is the conversation's summary and its newest whole turns: at
// most HistoryTurns of them and HistoryTokens tokens, but always the
// newest. Older turns are folded into the summary first, in the same
// transaction.
func (a *Agent) window(ctx context.Context, conv string) (string, []llm.Message, error) {
	var summary string
	var msgs []llm.Message
	err := a.cfg.Store.Tx(ctx, func(tx *sql.Tx) error {
		summary, msgs = "", nil
		ids, err := liveTurns(ctx, tx, conv)
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "SELECT summary FROM agent_summaries WHERE conversation_id = ?", conv).Scan(&summary); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		turns := make([][]llm.Message, len(ids))
		for i, id := range ids {
			if turns[i], err = turnMessages(ctx, tx, id); err != nil {
				return err
			}
		}
		keep, size := 0, 0
		for i := len(turns) - 1; i >= 0; i-- {
			size += turnTokens(turns[i])
			if keep > 0 && (keep >= a.cfg.HistoryTurns || size > a.cfg.HistoryTokens) {
				break
			}
			keep++
		}
		old := len(turns) - keep
		if old > 0 {
			var lines []string
			for i := range old {
				lines = append(lines, summarize(turns[i]))
				if _, err := tx.ExecContext(ctx, "UPDATE agent_turns SET compacted = 1 WHERE id = ?", ids[i]); err != nil {
					return err
				}
			}
			summary = fold(summary, lines)
			_, err := tx.ExecContext(ctx, `INSERT INTO agent_summaries (conversation_id, summary, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (conversation_id) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at`,
				conv, summary, store.FormatTime(a.now()))
			if err != nil {
				return err
			}
		}
		for _, t := range turns[old:] {
			msgs = append(msgs, t...)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("agent: history of %s: %w", conv, err)
	}
	return summary, msgs, nil
}

// turnTokens is what a turn costs the model, by the tokenizer.
func turnTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += tokens.Count(m.Content)
		for _, c := range m.ToolCalls {
			n += tokens.Count(c.Name) + tokens.Count(c.Arguments)
		}
	}
	return n
}

func liveTurns(ctx context.Context, tx *sql.Tx, conv string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM agent_turns WHERE conversation_id = ? AND compacted = 0 AND cleared = 0 ORDER BY id", conv)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func turnMessages(ctx context.Context, tx *sql.Tx, turn int64) ([]llm.Message, error) {
	rows, err := tx.QueryContext(ctx, "SELECT role, content, tool_calls, tool_call_id FROM agent_messages WHERE turn_id = ? ORDER BY id", turn)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []llm.Message
	for rows.Next() {
		var m llm.Message
		var role, calls string
		if err := rows.Scan(&role, &m.Content, &calls, &m.ToolCallID); err != nil {
			return nil, err
		}
		m.Role = llm.Role(role)
		if calls != "" {
			if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
				return nil, fmt.Errorf("turn %d: %w", turn, err)
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// summarize is one line for a compacted turn: what the owner said, what
// Fetch answered, and what its changing tools did (task ids survive).
func summarize(turn []llm.Message) string {
	var user, answer string
	names := map[string]string{}
	var did []string
	for _, m := range turn {
		switch {
		case m.Role == llm.User:
			user = m.Content
		case m.Role == llm.Assistant && len(m.ToolCalls) == 0:
			answer = m.Content
		case m.Role == llm.ToolRole:
			if summarized[names[m.ToolCallID]] && !strings.HasPrefix(m.Content, "error") {
				first, _, _ := strings.Cut(m.Content, ". ")
				did = append(did, clip(first, 80))
			}
		}
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	line := fmt.Sprintf("- Owner: %s → Fetch: %s", clip(user, summaryLine), clip(answer, summaryLine))
	if len(did) > 0 {
		line += " [" + strings.Join(did, "; ") + "]"
	}
	return line
}

// summarized are the tools whose results the summary keeps.
var summarized = map[string]bool{"workspace_select": true, "workspace_create": true, "workspace_delete": true, "task_create": true, "task_cancel": true}

// fold adds lines to the previous summary, dropping its oldest lines
// beyond summaryMax.
func fold(prev string, lines []string) string {
	all := append(strings.Split(strings.TrimSpace(prev), "\n"), lines...)
	var kept []string
	size := 0
	for i := len(all) - 1; i >= 0; i-- {
		l := strings.TrimSpace(all[i])
		if l == "" || l == droppedNote {
			continue
		}
		if size+len(l)+1 > summaryMax {
			kept = append(kept, droppedNote)
			break
		}
		size += len(l) + 1
		kept = append(kept, l)
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return strings.Join(kept, "\n")
}

const droppedNote = "- (older history dropped)"

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
