package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

// Following a task from the database: `fetch task log -f` and the
// terminal side of `fetch task run --wait` read the task's event log as it
// grows, whichever Fetch process runs the task (a task worker, fetch chat,
// fetch serve). SQLite tells no process of another's writes, so the log is
// read again every followPoll; a task's state and its log entry are written
// in one transaction, so the entries before an end are all there when the
// end is seen.

// followPoll is how often a follower reads a task's log again. Half a
// second keeps a terminal live and costs one indexed query.
const followPoll = 500 * time.Millisecond

// taskLog is what a follower reads: the task engine opened over the
// shared database.
type taskLog interface {
	Get(ctx context.Context, id string) (task.Task, error)
	LogAfter(ctx context.Context, id string, seq int64, fn func(task.LogEntry) error) error
}

// followTask calls fn with each entry of task id's log after entry seen
// (0: from the first), until done(t) says the task is where the follower
// stops, and returns the task then. It stops with ctx.
func followTask(ctx context.Context, tasks taskLog, id string, seen int64, fn func(task.LogEntry), done func(task.Task) bool) (task.Task, error) {
	read := func() error {
		return tasks.LogAfter(ctx, id, seen, func(le task.LogEntry) error {
			seen = le.Seq
			fn(le)
			return nil
		})
	}
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		if err := read(); err != nil {
			return task.Task{}, err
		}
		t, err := tasks.Get(ctx, id)
		if err != nil {
			return task.Task{}, err
		}
		if done(t) {
			// What was written between the two reads.
			if err := read(); err != nil {
				return task.Task{}, err
			}
			return t, nil
		}
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("follow task %s: %w", id, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// settled: the task ended or waits for an answer, where --wait stops.
func settled(t task.Task) bool { return t.State.Terminal() || t.State == task.WaitingInput }

// logTask prints task id's log, as fetch task log does; with follow it
// goes on printing what comes until the task ends or asks, then prints how
// it ended and returns its exit code (as --wait does).
func logTask(ctx context.Context, tasks taskLog, id string, follow, asJSON bool, stdout io.Writer, clean func(string) string) error {
	enc := json.NewEncoder(stdout)
	show := func(le task.LogEntry) {
		if asJSON {
			enc.Encode(le)
			return
		}
		fmt.Fprintln(stdout, logLine(le, clean))
	}
	done := func(task.Task) bool { return true }
	if follow {
		done = settled
	}
	t, err := followTask(ctx, tasks, id, 0, show, done)
	if err != nil || !follow {
		return err
	}
	if !asJSON {
		fmt.Fprintln(stdout)
		printEnd(stdout, cleanTask(t, clean), clean)
	}
	if code := t.State.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// printEnd prints how a followed task ended (or what it asks).
func printEnd(w io.Writer, t task.Task, clean func(string) string) {
	fmt.Fprintln(w, strings.TrimSpace(clean(progress.Result(t).Text)))
	if t.State == task.WaitingInput {
		fmt.Fprintf(w, "\n❓ %s\nAnswer with: fetch task answer %s \"…\"\n", t.Question, t.ID)
	}
}

// stepPrinter prints the steps of a followed task from its log entries,
// as the terminal shows a task it waits for.
type stepPrinter struct {
	w     io.Writer
	clean func(string) string
	tasks taskLog
	id    string
}

func (p *stepPrinter) entry(ctx context.Context, le task.LogEntry) {
	switch le.Kind {
	case "state":
		var s struct {
			From   task.State `json:"from"`
			To     task.State `json:"to"`
			Reason string     `json:"reason"`
		}
		if json.Unmarshal(le.Data, &s) != nil {
			return
		}
		// A task's first run starts from the queue; any other start is
		// a follow-up (continued, retried, answered).
		if s.To == task.Running && s.From != "" && s.From != task.Queued {
			fmt.Fprintf(p.w, "Resumed: %s\n", oneLineClip(p.clean(s.Reason), 120))
		}
	case task.KindRelayed:
		var d task.RelayedEntry
		if json.Unmarshal(le.Data, &d) == nil {
			fmt.Fprintln(p.w, "  "+p.clean(requestLine(d.Update, d.Request)))
		}
	case task.KindReattached:
		var d struct {
			Engine string `json:"engine"`
		}
		json.Unmarshal(le.Data, &d)
		if d.Engine != "" {
			fmt.Fprintf(p.w, "Engine %s answers again; task %s is still running, following it again\n", p.clean(d.Engine), p.id)
			return
		}
		fmt.Fprintf(p.w, "Task %s is still running after a restart; following it again\n", p.id)
	case task.KindUnreachable:
		var d struct {
			Engine string `json:"engine"`
			Cancel bool   `json:"cancel"`
		}
		json.Unmarshal(le.Data, &d)
		t, err := p.tasks.Get(ctx, p.id)
		if err != nil {
			return
		}
		t.CancelRequested = d.Cancel
		fmt.Fprintln(p.w, p.clean(progress.Unreachable(t, d.Engine).Text))
	default:
		var ev harness.Event
		if json.Unmarshal(le.Data, &ev) != nil || ev.Kind == "" {
			return
		}
		if s := progress.Step(ev, p.clean); s != "" {
			fmt.Fprintln(p.w, "  "+s)
		}
	}
}
