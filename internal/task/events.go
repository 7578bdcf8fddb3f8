package task

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// KindReattached marks, in a task's event log, its run followed again by
// a Fetch that restarted while it ran (its data is {}).
const KindReattached = "reattached"

// KindUnreachable marks, in a task's event log, the moment its run's
// Docker engine stopped answering (data {"engine": NAME}, with "cancel":
// true for a cancel that waits for the engine). A KindReattached entry
// with the engine's name follows when the run is followed again.
const KindUnreachable = "unreachable"

// KindRelayed marks, in a task's event log, a request of a terminal
// task's CLI relayed to the owner's chat, and its end (data: a
// RelayedEntry), for whoever follows the task from the terminal.
const KindRelayed = "relayed"

// RelayedEntry is the data of a KindRelayed entry: Update is Requested or
// RequestClosed.
type RelayedEntry struct {
	Update  UpdateKind `json:"update"`
	Request CLIRequest `json:"request"`
}

// LogEntry is one entry of a task's event log: a state transition (Kind
// "state"), a re-attach (KindReattached), an engine out of reach
// (KindUnreachable) or a harness event (Kind is the
// event's kind).
type LogEntry struct {
	Seq  int64           `json:"seq"`
	At   time.Time       `json:"at"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// Log calls fn for each entry of a task's event log, oldest first.
func (e *Engine) Log(ctx context.Context, id string, fn func(LogEntry) error) error {
	return e.LogAfter(ctx, id, 0, fn)
}

// LogAfter is Log for the entries after seq only: a reader that follows a
// log (the task page's live view) asks for what came since the last entry
// it saw, whichever Fetch process wrote it.
func (e *Engine) LogAfter(ctx context.Context, id string, seq int64, fn func(LogEntry) error) error {
	if _, err := e.Get(ctx, id); err != nil {
		return err
	}
	rows, err := e.db.QueryContext(ctx, "SELECT id, at, kind, data FROM "+eventsTable+" WHERE task_id = ? AND id > ? ORDER BY id", id, seq)
	if err != nil {
		return fmt.Errorf("task: log %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var le LogEntry
		var at, data string
		if err := rows.Scan(&le.Seq, &at, &le.Kind, &data); err != nil {
			return fmt.Errorf("task: log %s: %w", id, err)
		}
		le.At, le.Data = parseTime(at), json.RawMessage(data)
		if err := fn(le); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("task: log %s: %w", id, err)
	}
	return nil
}

// Export writes a task's event log as JSON lines.
func (e *Engine) Export(ctx context.Context, id string, w io.Writer) error {
	enc := json.NewEncoder(w)
	return e.Log(ctx, id, func(le LogEntry) error {
		if err := enc.Encode(le); err != nil {
			return fmt.Errorf("task: export %s: %w", id, err)
		}
		return nil
	})
}
