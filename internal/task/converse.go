package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
)

// The conversation carries the work: an ended task is continued with a new
// instruction on its own branch (Continue), a failed one retried as it was
// (Retry), and a message to a task that works reaches its CLI when the CLI
// takes one mid-run, or waits as the task's next follow-up (Tell).

// messagesTable holds the messages that wait for a task's next run.
const messagesTable = "task_messages"

// Requeued: a message the owner sent to a running CLI did not reach it
// before its run ended; it waits for the next run (Update.Message), which
// starts when the run's end is recorded.
const Requeued UpdateKind = "requeued"

// TellHow says what became of a message to a task.
type TellHow string

const (
	// TellSent: it went to the running CLI, which takes it at its next
	// turn boundary.
	TellSent TellHow = "sent"
	// TellQueued: it waits for the task's next run, which starts when
	// the running one ends (Told.MessageID takes it back: Withdraw).
	TellQueued TellHow = "queued"
	// TellContinued: the task had ended; a follow-up run started with it.
	TellContinued TellHow = "continued"
)

// Told is the outcome of Tell.
type Told struct {
	How  TellHow
	Task Task
	// MessageID is the queued message's id (TellQueued).
	MessageID int64
}

// Message is a message that waits for a task's next run.
type Message struct {
	ID     int64  `json:"id"`
	TaskID string `json:"task_id"`
	Text   string `json:"text"`
	State  string `json:"state"`
	// Attachments came with it.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Message states.
const (
	msgQueued    = "queued"
	msgTaken     = "taken"
	msgWithdrawn = "withdrawn"
	msgDropped   = "dropped"
)

// ValidateMessage checks a message to a task like a goal.
func ValidateMessage(text string) error { return ValidateGoal(text) }

// Tell gives the owner's message to task id: to its CLI while it works,
// when the CLI takes messages mid-run (harness.Traits.Steer); otherwise it
// waits for the task's next run, which starts when this one ends; a task
// that ended is continued with it at once. /stop overtakes: a stopped
// task drops what waited.
func (e *Engine) Tell(ctx context.Context, id, text, by string, atts ...Attachment) (Told, error) {
	text = e.store.Scrub(redact.StripControl(text))
	if err := ValidateMessage(text); err != nil {
		return Told{}, fmt.Errorf("task: tell %s: %w", id, err)
	}
	if err := checkAttachments(atts); err != nil {
		return Told{}, fmt.Errorf("task: tell %s: %w", id, err)
	}
	if !e.isOpen() {
		return Told{}, fmt.Errorf("task: tell: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return Told{}, err
	}
	if t.Mode != Work {
		return Told{}, fmt.Errorf("task: tell %s: it answered a question and has no branch to work on; ask again instead: %w", id, ErrInvalid)
	}
	if t.State.Terminal() {
		if err := e.Continue(ctx, id, text, atts...); err != nil {
			return Told{}, err
		}
		t, _ = e.Get(ctx, id)
		return Told{How: TellContinued, Task: t}, nil
	}
	// A message with files waits for the next run, which gets them in
	// its CLI's own form; a running CLI takes text only.
	if t.State == Running && len(atts) == 0 {
		if st := e.steering.get(id); st != nil && st.ht.Mailbox != nil {
			if err := st.ht.Mailbox.Put(text); err == nil {
				e.logEntry(id, kindMessage, messageEvent{Text: text, How: TellSent, By: by})
				return Told{How: TellSent, Task: t}, nil
			}
		}
	}
	mid, err := e.queueMessage(ctx, id, text, by, atts)
	if err != nil {
		return Told{}, err
	}
	e.logEntry(id, kindMessage, messageEvent{Text: text, How: TellQueued, By: by, ID: mid})
	// The run may have ended between the look and the queueing: its end
	// found nothing waiting, so the message starts the next run here.
	if cur, err := e.Get(ctx, id); err == nil && cur.State.Terminal() {
		if e.takeMessages(ctx, cur) {
			cur, _ = e.Get(ctx, id)
			return Told{How: TellContinued, Task: cur}, nil
		}
	}
	return Told{How: TellQueued, Task: t, MessageID: mid}, nil
}

// kindMessage marks the owner's messages to a task in its event log.
const kindMessage = "message"

// messageEvent is the data of a message in the event log.
type messageEvent struct {
	Text string  `json:"text"`
	How  TellHow `json:"how"`
	By   string  `json:"by,omitempty"`
	ID   int64   `json:"id,omitempty"`
}

// Continue runs an ended task again on its own branch with a new
// instruction from the owner: the CLI resumes its session where it has
// one, otherwise a new session is told the goal and the instruction. Its
// commits add to the branch; a succeeded run ships again, which updates an
// open pull request. It fails with ErrState while the task works (Tell
// queues then) and when its worktree is gone.
func (e *Engine) Continue(ctx context.Context, id, text string, atts ...Attachment) error {
	text = e.store.Scrub(redact.StripControl(text))
	if err := ValidateMessage(text); err != nil {
		return fmt.Errorf("task: continue %s: %w", id, err)
	}
	if err := checkAttachments(atts); err != nil {
		return fmt.Errorf("task: continue %s: %w", id, err)
	}
	t, err := e.continuable(ctx, id, "continue")
	if err != nil {
		return err
	}
	return e.followUp(ctx, t, followPrompt(t, text), "continued: "+firstLine(text), atts...)
}

// Retry runs a failed, cancelled or unclear task again as it was asked: a
// fresh session of its CLI, given its goal, on its own branch (the work
// already there stays).
func (e *Engine) Retry(ctx context.Context, id string) error {
	t, err := e.continuable(ctx, id, "retry")
	if err != nil {
		return err
	}
	if t.State == Succeeded {
		return fmt.Errorf("task: retry %s: it succeeded; continue it with what to change instead: %w", id, ErrState)
	}
	t.SessionID = ""
	return e.followUp(ctx, t, "", "retried")
}

// continuable loads task id for a follow-up run.
func (e *Engine) continuable(ctx context.Context, id, verb string) (Task, error) {
	if !e.isOpen() {
		return Task{}, fmt.Errorf("task: %s: %w", verb, ErrClosed)
	}
	t, err := e.Get(ctx, id)
	switch {
	case err != nil:
		return Task{}, err
	case t.Mode != Work:
		return t, fmt.Errorf("task: %s %s: it answered a question and has no branch to work on; ask again instead: %w", verb, id, ErrInvalid)
	case !t.State.Terminal():
		return t, fmt.Errorf("task: %s %s: it is %s; a message to it waits for its next run (fetch task continue, /continue): %w", verb, id, t.State, ErrState)
	case t.Worktree == "":
		return t, fmt.Errorf("task: %s %s: its worktree is gone (the task was discarded, or its work never started); start a new task: %w", verb, id, ErrState)
	}
	return t, nil
}

// followPrompt is what a follow-up run is told: the owner's words when the
// CLI resumes its session (it knows the rest); otherwise they follow the
// goal, which harnessTask puts first, with how the last run ended.
func followPrompt(t Task, text string) string {
	if t.SessionID != "" {
		return text
	}
	var b strings.Builder
	fmt.Fprintf(&b, "This work is already under way on the current branch (a run before this one ended: %s", t.State)
	if t.Summary != "" {
		fmt.Fprintf(&b, "; it said: %s", firstLine(t.Summary))
	} else if t.Error != "" {
		fmt.Fprintf(&b, "; %s", firstLine(t.Error))
	}
	b.WriteString("). Look at what is there (git log, git diff), then do what the user asks now:\n")
	b.WriteString(text)
	return b.String()
}

// sessionGonePrompt is what a follow-up run is told when the session it
// was to resume is gone: the goal comes first (harnessTask), then this.
func sessionGonePrompt(text string) string {
	return "This work is already under way on the current branch, but the session of the runs before this one is gone. Look at what is there (git log, git diff), then do what the user asks now:\n" + text
}

// firstLine is s's first line, cut at 200 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// queueMessage stores a message for task id's next run.
func (e *Engine) queueMessage(ctx context.Context, id, text, by string, atts []Attachment) (int64, error) {
	now := store.FormatTime(e.now())
	var mid int64
	err := e.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO "+messagesTable+" (task_id, text, attachments, state, by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			id, text, attachmentsJSON(atts), msgQueued, by, now, now)
		if err != nil {
			return err
		}
		mid, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("task: queue a message for %s: %w", id, err)
	}
	return mid, nil
}

// QueuedMessages lists the messages that wait for task id's next run,
// oldest first.
func (e *Engine) QueuedMessages(ctx context.Context, id string) ([]Message, error) {
	rows, err := e.db.QueryContext(ctx, "SELECT id, task_id, text, state, attachments FROM "+messagesTable+" WHERE task_id = ? AND state = ? ORDER BY id", id, msgQueued)
	if err != nil {
		return nil, fmt.Errorf("task: messages of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var atts string
		if err := rows.Scan(&m.ID, &m.TaskID, &m.Text, &m.State, &atts); err != nil {
			return nil, fmt.Errorf("task: messages of %s: %w", id, err)
		}
		if err := json.Unmarshal([]byte(atts), &m.Attachments); err != nil {
			return nil, fmt.Errorf("task: messages of %s: %w", id, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ErrNotQueued: the message no longer waits (a run took it, it was taken
// back, or the task was stopped).
var ErrNotQueued = errors.New("the message no longer waits")

// Withdraw takes back a message that waits for its task's next run. It
// returns the message as it was.
func (e *Engine) Withdraw(ctx context.Context, messageID int64) (Message, error) {
	var m Message
	err := e.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT id, task_id, text, state FROM "+messagesTable+" WHERE id = ?", messageID).Scan(&m.ID, &m.TaskID, &m.Text, &m.State)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("message %d: %w", messageID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if m.State != msgQueued {
			return fmt.Errorf("message %d is %s: %w", messageID, m.State, ErrNotQueued)
		}
		_, err = tx.ExecContext(ctx, "UPDATE "+messagesTable+" SET state = ?, updated_at = ? WHERE id = ? AND state = ?",
			msgWithdrawn, store.FormatTime(e.now()), messageID, msgQueued)
		return err
	})
	if err != nil {
		return Message{}, fmt.Errorf("task: withdraw: %w", err)
	}
	e.logEntry(m.TaskID, kindMessage, messageEvent{Text: m.Text, How: msgWithdrawn, ID: m.ID})
	return m, nil
}

// requeue keeps the messages a two-way run ended without delivering: they
// wait for the next run, and the owner is told.
func (e *Engine) requeue(ctx context.Context, t Task, texts []string) {
	for _, text := range texts {
		mid, err := e.queueMessage(ctx, t.ID, text, "", nil)
		if err != nil {
			e.log.Error("keep a message the run did not take", "task", t.ID, "err", err)
			continue
		}
		e.logEntry(t.ID, kindMessage, messageEvent{Text: text, How: TellQueued, ID: mid})
		e.notify(ctx, Update{Kind: Requeued, Task: t, Message: &Message{ID: mid, TaskID: t.ID, Text: text, State: msgQueued}})
	}
}

// afterEnd handles what waited for t's end: a stopped task drops its
// messages (the owner's /stop overtakes them); any other end starts the
// follow-up run they make. It reports whether one started.
func (e *Engine) afterEnd(ctx context.Context, t Task) bool {
	if t.State == Cancelled {
		_, err := e.db.ExecContext(ctx, "UPDATE "+messagesTable+" SET state = ?, updated_at = ? WHERE task_id = ? AND state = ?",
			msgDropped, store.FormatTime(e.now()), t.ID, msgQueued)
		if err != nil {
			e.log.Error("drop the messages of a stopped task", "task", t.ID, "err", err)
		}
		return false
	}
	return e.takeMessages(ctx, t)
}

// takeMessages starts t's follow-up run with the messages that wait for
// it, when there are any and t ended. It reports whether it started.
func (e *Engine) takeMessages(ctx context.Context, t Task) bool {
	msgs, err := e.QueuedMessages(ctx, t.ID)
	if err != nil {
		e.log.Error("read the messages that wait for a task", "task", t.ID, "err", err)
		return false
	}
	if len(msgs) == 0 || !t.State.Terminal() || t.Mode != Work || t.Worktree == "" {
		return false
	}
	texts := make([]string, len(msgs))
	var atts []Attachment
	for i, m := range msgs {
		texts[i] = m.Text
		atts = append(atts, m.Attachments...)
	}
	text := strings.Join(texts, "\n\n")
	if err := e.followUp(ctx, t, followPrompt(t, text), "continued: "+firstLine(text), atts...); err != nil {
		// Another caller started it (ErrState), or the workspace is
		// busy: the messages still wait.
		e.log.Info("the messages that wait for a task did not start its next run", "task", t.ID, "err", err)
		return false
	}
	now := store.FormatTime(e.now())
	for _, m := range msgs {
		if _, err := e.db.ExecContext(ctx, "UPDATE "+messagesTable+" SET state = ?, updated_at = ? WHERE id = ? AND state = ?", msgTaken, now, m.ID, msgQueued); err != nil {
			e.log.Error("mark a message taken", "task", t.ID, "message", m.ID, "err", err)
		}
	}
	return true
}

// WaitSettled waits like Wait, and past an end that messages waited for:
// the follow-up run they make (started by whichever Fetch followed the
// run) is waited for too, so that a process following a task from the
// command line does not leave before it.
func (e *Engine) WaitSettled(ctx context.Context, id string) (Task, error) {
	for {
		t, err := e.Wait(ctx, id)
		if err != nil || !t.State.Terminal() {
			return t, err
		}
		msgs, err := e.QueuedMessages(ctx, id)
		if err != nil || len(msgs) == 0 || t.Worktree == "" {
			return t, nil
		}
		// The end's follow-up is being started: look again shortly.
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("task: wait %s: %w", id, context.Cause(ctx))
		case <-time.After(crossProcessPoll):
		}
		if cur, err := e.Get(ctx, id); err == nil && cur.State.Terminal() && cur.UpdatedAt.Equal(t.UpdatedAt) {
			// Nothing took them (no Fetch follows the task, or this
			// one is closing): start the follow-up here.
			e.takeMessages(ctx, cur)
		}
	}
}
