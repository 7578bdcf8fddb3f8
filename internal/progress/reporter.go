package progress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// Chat is what the reporter needs of the conversation layer
// (*conversation.Manager).
type Chat interface {
	Notify(ctx context.Context, conversationID string, r chat.Reply) error
	Fire(ctx context.Context, conversationID string, e modes.Event, reason string) error
}

// Tasks is what the reporter needs of the task engine (*task.Engine).
type Tasks interface {
	Active(ctx context.Context, conversationID string) ([]task.Task, error)
	List(ctx context.Context, f task.Filter) ([]task.Task, error)
	Cancel(ctx context.Context, id string) error
	Respond(ctx context.Context, id, answer string) error
}

// Resolver continues what waited on an answered prompt
// (conversation.Resolver).
type Resolver interface {
	Resolved(ctx context.Context, p store.Prompt, answer string, mode *modes.Machine) ([]chat.Reply, error)
}

// Defaults.
const (
	// DefaultEditEvery is the least time between two edits of a task's
	// status message for tool steps: channels rate-limit edits.
	DefaultEditEvery = 3 * time.Second
	// maxText keeps a message under Discord's 2,000 characters.
	maxText = 1900
	// inlineDiff is the longest diff shown in the message; a longer one is
	// attached as a file.
	inlineDiff = 900
	// lastSteps is how many recent steps the status message shows.
	lastSteps = 3
)

// StopCommand is what the Stop button sends.
const StopCommand = "/stop"

// Config is what a Reporter needs; Chat, Store, Tasks and Logger are
// required.
type Config struct {
	Chat   Chat
	Store  *store.DB
	Tasks  Tasks
	Logger *slog.Logger
	// Next resolves prompts that are not task questions (the agent's
	// approvals); nil when none.
	Next Resolver
	// EditEvery is DefaultEditEvery when 0.
	EditEvery time.Duration
	Now       func() time.Time
}

// Reporter turns task updates into chat messages and mode events.
type Reporter struct {
	cfg Config
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	status map[string]*status // by task id, while it runs
}

// status is what the reporter keeps of a running task between updates.
type status struct {
	steps    int
	last     []string
	edited   time.Time
	deferred bool // steps arrived since the last edit
}

// New builds a Reporter.
func New(cfg Config) *Reporter {
	if cfg.EditEvery <= 0 {
		cfg.EditEvery = DefaultEditEvery
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Reporter{cfg: cfg, log: cfg.Logger, now: now, status: map[string]*status{}}
}

// Key is the edit key of a task's status message.
func Key(id string) string { return "task:" + id }

// TaskUpdate implements task.Observer.
func (r *Reporter) TaskUpdate(ctx context.Context, u task.Update) {
	t := u.Task
	if t.ConversationID == "" {
		return
	}
	log := r.log.With("task", t.ID, "conversation", t.ConversationID)
	var err error
	switch u.Kind {
	case task.Started:
		r.reset(t.ID)
		err = r.send(ctx, t, r.statusReply(t, "running"))
		if err == nil && t.Runs <= 1 {
			err = r.fireIfFirst(ctx, t)
		}
	case task.Reattached:
		r.reset(t.ID)
		err = r.send(ctx, t, r.statusReply(t, "running again after a restart of Fetch — following it"))
	case task.Progress:
		err = r.progress(ctx, t, u.Event)
	case task.Asked:
		err = r.asked(ctx, t)
	case task.Ended:
		err = r.ended(ctx, t, u.Recovered)
	}
	if err != nil {
		log.Error("report task update", "update", u.Kind, "err", err)
	}
}

func (r *Reporter) reset(id string) {
	r.mu.Lock()
	r.status[id] = &status{}
	r.mu.Unlock()
}

func (r *Reporter) send(ctx context.Context, t task.Task, reply chat.Reply) error {
	return r.cfg.Chat.Notify(ctx, t.ConversationID, reply)
}

// fireIfFirst moves the conversation to WORKING when t is its only active
// task.
func (r *Reporter) fireIfFirst(ctx context.Context, t task.Task) error {
	active, err := r.cfg.Tasks.Active(ctx, t.ConversationID)
	if err != nil {
		return err
	}
	if len(active) != 1 {
		return nil
	}
	return r.cfg.Chat.Fire(ctx, t.ConversationID, modes.TaskStarted, "task "+t.ID+" started")
}

// progress coalesces tool steps: the status message is edited at most once
// per EditEvery; steps in between are counted and shown at the next edit.
func (r *Reporter) progress(ctx context.Context, t task.Task, ev *harness.Event) error {
	if ev == nil {
		return nil
	}
	line := Step(*ev)
	if line == "" {
		return nil
	}
	now := r.now()
	r.mu.Lock()
	st := r.status[t.ID]
	if st == nil {
		st = &status{}
		r.status[t.ID] = st
	}
	st.steps++
	st.last = append(st.last, line)
	if len(st.last) > lastSteps {
		st.last = st.last[len(st.last)-lastSteps:]
	}
	if now.Sub(st.edited) < r.cfg.EditEvery {
		st.deferred = true
		r.mu.Unlock()
		return nil
	}
	st.edited, st.deferred = now, false
	r.mu.Unlock()
	return r.send(ctx, t, r.statusReply(t, "running"))
}

// statusReply is the task's status message with its Stop button.
func (r *Reporter) statusReply(t task.Task, what string) chat.Reply {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Task %s on %s (%s) — %s\nGoal: %s", modes.Working.Emoji(), t.ID, t.Workspace, t.Harness, what, clip(oneLine(t.Goal), 200))
	r.mu.Lock()
	if st := r.status[t.ID]; st != nil && st.steps > 0 {
		fmt.Fprintf(&b, "\nSteps: %d", st.steps)
		for _, l := range st.last {
			b.WriteString("\n  " + l)
		}
	}
	r.mu.Unlock()
	return chat.Reply{
		Text:    clip(b.String(), maxText),
		Key:     Key(t.ID),
		Actions: []chat.Action{{Label: "Stop", Send: StopCommand, Style: chat.Danger}},
	}
}

// promptAction marks a prompt as a task's question.
type promptAction struct {
	Task string `json:"task"`
}

// asked opens the question as a prompt, moves the conversation to WAITING
// and shows the question.
func (r *Reporter) asked(ctx context.Context, t task.Task) error {
	if err := r.send(ctx, t, r.statusReply(t, "waiting for your answer")); err != nil {
		return err
	}
	action, _ := json.Marshal(promptAction{Task: t.ID})
	text := fmt.Sprintf("❓ Task %s asks:\n%s\n\nReply with your answer; the task resumes with it.", t.ID, clip(t.Question, maxText-200))
	_, err := r.cfg.Store.AddPrompt(ctx, store.Prompt{ConversationID: t.ConversationID, Kind: store.Question, Body: t.Question, Action: string(action)})
	switch {
	case errors.Is(err, store.ErrConflict):
		// Something else waits for an answer first; the question stays on
		// the task (fetch task answer ID, or after the other prompt).
		text += fmt.Sprintf("\n(I'm waiting on another answer first; you can also answer with: fetch task answer %s \"…\")", t.ID)
	case err != nil:
		return err
	default:
		if err := r.cfg.Chat.Fire(ctx, t.ConversationID, modes.Asked, "task "+t.ID+" asked"); err != nil {
			return err
		}
	}
	return r.send(ctx, t, chat.Text(text))
}

// ended replaces the status message with the result, closes a question
// the task left open, and moves the conversation back to ALERT when this
// was its last active task.
func (r *Reporter) ended(ctx context.Context, t task.Task, recovered bool) error {
	r.mu.Lock()
	delete(r.status, t.ID)
	r.mu.Unlock()
	if p, err := r.cfg.Store.OpenPrompt(ctx, t.ConversationID); err == nil && promptTask(p) == t.ID {
		if err := r.cfg.Store.ResolvePrompt(ctx, p.ID, string(t.State)); err != nil {
			return err
		}
	}
	// The mode moves first, so that whoever reads the result finds the
	// conversation where the result leaves it.
	active, err := r.cfg.Tasks.Active(ctx, t.ConversationID)
	if err != nil {
		return err
	}
	if len(active) == 0 {
		if err := r.cfg.Chat.Fire(ctx, t.ConversationID, modes.TaskEnded, fmt.Sprintf("task %s %s", t.ID, t.State)); err != nil {
			return err
		}
	}
	return r.send(ctx, t, Result(t))
}

func promptTask(p store.Prompt) string {
	var a promptAction
	if json.Unmarshal([]byte(p.Action), &a) != nil {
		return ""
	}
	return a.Task
}

// Result is the message for a task that ended: its state, summary or
// error, files with line counts, and the diff — inline when short,
// otherwise attached as ID.patch.
func Result(t task.Task) chat.Reply {
	var b strings.Builder
	switch t.State {
	case task.Succeeded:
		fmt.Fprintf(&b, "✅ Task %s succeeded on %s", t.ID, t.Workspace)
	case task.Failed:
		fmt.Fprintf(&b, "❌ Task %s failed on %s", t.ID, t.Workspace)
		if t.ExitCode > 0 {
			fmt.Fprintf(&b, " (exit code %d)", t.ExitCode)
		}
	case task.Cancelled:
		fmt.Fprintf(&b, "⏹️ Task %s was cancelled on %s", t.ID, t.Workspace)
	case task.NeedsAttention:
		fmt.Fprintf(&b, "⚠️ Task %s on %s needs your attention", t.ID, t.Workspace)
	case task.Queued, task.Running, task.WaitingInput:
		fmt.Fprintf(&b, "Task %s on %s is %s", t.ID, t.Workspace, t.State)
	}
	b.WriteString("\nGoal: " + clip(oneLine(t.Goal), 200))
	if t.Summary != "" {
		b.WriteString("\n\n" + clip(strings.TrimSpace(t.Summary), 700))
	}
	if t.Error != "" && t.State != task.Succeeded {
		b.WriteString("\n\n" + clip(strings.TrimSpace(t.Error), 400))
	}
	if t.State == task.Failed && t.StderrTail != "" && !strings.Contains(t.Error, strings.TrimSpace(lastLines(t.StderrTail, 1))) {
		b.WriteString("\nstderr:\n" + clip(lastLines(t.StderrTail, 3), 300))
	}
	if len(t.Files) > 0 {
		fmt.Fprintf(&b, "\n\nBranch %s: %d file(s), +%d −%d", t.Branch, len(t.Files), t.Added(), t.Removed())
		for i, f := range t.Files {
			if i == 8 {
				fmt.Fprintf(&b, "\n  … and %d more", len(t.Files)-i)
				break
			}
			if f.Binary {
				fmt.Fprintf(&b, "\n  %s (binary)", f.Path)
			} else {
				fmt.Fprintf(&b, "\n  %s +%d −%d", f.Path, f.Added, f.Removed)
			}
		}
		if t.State == task.Cancelled || t.State == task.Failed {
			b.WriteString("\nThe partial work is kept on the branch.")
		}
	} else if t.Branch != "" && t.Worktree != "" {
		fmt.Fprintf(&b, "\n\nNo files changed (branch %s).", t.Branch)
	}
	reply := chat.Reply{Key: Key(t.ID)}
	switch {
	case t.Patch == "":
	case len(t.Patch) <= inlineDiff && b.Len()+len(t.Patch) < maxText-20:
		b.WriteString("\n```diff\n" + t.Patch + "```")
	default:
		reply.Files = []chat.File{{Name: t.ID + ".patch", Data: []byte(t.Patch)}}
		b.WriteString("\nThe diff is attached.")
	}
	reply.Text = clip(b.String(), maxText)
	return reply
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Resolved implements conversation.Resolver: an answered task question
// resumes the task; any other prompt goes to Next.
func (r *Reporter) Resolved(ctx context.Context, p store.Prompt, answer string, mode *modes.Machine) ([]chat.Reply, error) {
	id := promptTask(p)
	if id == "" {
		if r.cfg.Next == nil {
			return nil, nil
		}
		return r.cfg.Next.Resolved(ctx, p, answer, mode)
	}
	if err := r.cfg.Tasks.Respond(ctx, id, answer); err != nil {
		if errors.Is(err, task.ErrState) || errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrInvalid) {
			return []chat.Reply{chat.Text(fmt.Sprintf("Task %s can't take that answer: %s", id, err))}, nil
		}
		return nil, err
	}
	return []chat.Reply{chat.Text(fmt.Sprintf("Resuming task %s with your answer.", id))}, nil
}

// Running and StopAll implement conversation.Tasks over the engine.
type Running struct{ Tasks Tasks }

// Running returns the conversation's running task, nil when none.
func (s Running) Running(ctx context.Context, conversationID string) (*instincts.Task, error) {
	ts, err := s.Tasks.List(ctx, task.Filter{ConversationID: conversationID, States: []task.State{task.Running}})
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	t := ts[len(ts)-1] // the oldest
	return &instincts.Task{ID: t.ID, Goal: t.Goal, Harness: t.Harness, Workspace: t.Workspace, StartedAt: t.StartedAt}, nil
}

// StopAll cancels every task of the conversation that has not ended.
func (s Running) StopAll(ctx context.Context, conversationID string) error {
	ts, err := s.Tasks.List(ctx, task.Filter{ConversationID: conversationID, States: []task.State{task.Queued, task.Running, task.WaitingInput}})
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range ts {
		if err := s.Tasks.Cancel(ctx, t.ID); err != nil && !errors.Is(err, task.ErrState) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
