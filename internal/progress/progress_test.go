package progress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/modes"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const conv = "dm:1"

// tasks is the engine as the reporter sees it, kept in memory: the tests
// here are about what the reporter makes of updates.
type tasks struct {
	mu        sync.Mutex
	active    []task.Task
	responded map[string]string
}

func (f *tasks) Active(context.Context, string) ([]task.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]task.Task(nil), f.active...), nil
}
func (f *tasks) List(ctx context.Context, filter task.Filter) ([]task.Task, error) {
	all, _ := f.Active(ctx, "")
	var out []task.Task
	for _, t := range all {
		if len(filter.States) == 0 || slices.Contains(filter.States, t.State) {
			out = append(out, t)
		}
	}
	return out, nil
}
func (f *tasks) Cancel(context.Context, string) error { return nil }

// Respond resumes a waiting task, as the engine does before it returns.
func (f *tasks) Respond(_ context.Context, id, answer string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.active {
		if t.ID == id && t.State == task.WaitingInput {
			f.active[i].State, f.active[i].Question = task.Running, ""
			f.responded[id] = answer
			return nil
		}
	}
	return fmt.Errorf("task %s is not waiting: %w", id, task.ErrState)
}
func (f *tasks) set(ts ...task.Task) {
	f.mu.Lock()
	f.active = ts
	f.mu.Unlock()
}

type env struct {
	db    *store.DB
	rec   *testkit.Recorder
	mgr   *conversation.Manager
	tasks *tasks
	rep   *progress.Reporter
	now   time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureConversation(t.Context(), conv, "term", "1"); err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, rec: testkit.NewRecorder(), tasks: &tasks{responded: map[string]string{}}, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	chatRef := &struct{ *conversation.Manager }{}
	e.rep = progress.New(progress.Config{Chat: chatRef, Store: db, Tasks: e.tasks, Logger: log, Now: func() time.Time { return e.now }})
	e.mgr = conversation.New(conversation.Config{
		Store: db, Senders: map[string]chat.Sender{"term": e.rec}, Logger: log, Resolver: e.rep, Tasks: progress.Running{Tasks: e.tasks},
		RoleOf: func(_, u string) chat.Role { return chat.Owner },
	})
	chatRef.Manager = e.mgr
	if err := e.mgr.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.mgr.Close(context.Background()) })
	return e
}

func (e *env) mode(t *testing.T) modes.Mode {
	t.Helper()
	if err := e.mgr.Idle(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
	st, err := e.db.Mode(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	return modes.Mode(st.Mode)
}

func TestTaskLifecycleInChat(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tk := task.Task{ID: "abc123", ConversationID: conv, Workspace: "api", Harness: "claude", Goal: "add a health endpoint", State: task.Running, Runs: 1, Branch: "fetch/abc123", Worktree: "/w/api/.fetch/worktrees/abc123"}
	e.tasks.set(tk)
	e.rep.TaskUpdate(ctx, task.Update{Kind: task.Started, Task: tk})
	if m := e.mode(t); m != modes.Working {
		t.Fatalf("mode after start = %s; want WORKING", m)
	}
	sent := e.rec.WaitFor(t, 1)
	first := sent[0].Reply
	if first.Key != "task:abc123" || len(first.Actions) != 1 || first.Actions[0].Send != "/stop" || !strings.Contains(first.Text, "abc123") {
		t.Fatalf("status message = %+v", first)
	}

	// Steps within the edit period are coalesced into the next edit.
	steps := []harness.Event{
		{Kind: harness.KindToolUse, Tool: "Read", Input: json.RawMessage(`{"file_path":"/w/api/main.go"}`)},
		{Kind: harness.KindCommand, Command: "go test ./..."},
		{Kind: harness.KindUsage, Usage: &harness.Usage{InputTokens: 3}},
		{Kind: harness.KindText, Text: "Adding the handler."},
	}
	for i := range steps {
		e.rep.TaskUpdate(ctx, task.Update{Kind: task.Progress, Task: tk, Event: &steps[i]})
	}
	if n := len(e.rec.Sent()); n != 2 {
		t.Fatalf("%d messages after 3 steps in one period; want 2 (one edit)", n)
	}
	e.now = e.now.Add(progress.DefaultEditEvery)
	e.rep.TaskUpdate(ctx, task.Update{Kind: task.Progress, Task: tk, Event: &harness.Event{Kind: harness.KindCommand, Command: "go vet ./..."}})
	sent = e.rec.WaitFor(t, 3)
	last := sent[2].Reply
	if last.Key != "task:abc123" || !strings.Contains(last.Text, "Steps: 4") || !strings.Contains(last.Text, "$ go vet ./...") || !strings.Contains(last.Text, "💬 Adding the handler.") {
		t.Fatalf("coalesced edit:\n%s", last.Text)
	}

	// A question: a prompt, WAITING, the question shown.
	tk.State, tk.Question = task.WaitingInput, "Should the endpoint need auth?"
	e.tasks.set(tk)
	e.rep.TaskUpdate(ctx, task.Update{Kind: task.Asked, Task: tk})
	if m := e.mode(t); m != modes.Waiting {
		t.Fatalf("mode after question = %s; want WAITING", m)
	}
	p, err := e.db.OpenPrompt(ctx, conv)
	if err != nil || p.Kind != store.Question || p.Body != tk.Question || !strings.Contains(p.Action, `"abc123"`) {
		t.Fatalf("prompt = %+v, %v", p, err)
	}
	// The owner answers in the chat: the answer reaches the task.
	if err := e.mgr.Receive(ctx, chat.Message{Channel: "term", ConversationID: conv, UserID: "1", Text: "no auth"}); err != nil {
		t.Fatal(err)
	}
	if m := e.mode(t); m != modes.Working {
		t.Fatalf("mode after answer = %s; want WORKING", m)
	}
	if got := e.tasks.responded["abc123"]; got != "no auth" {
		t.Fatalf("answer passed on = %q", got)
	}
	texts := strings.Join(e.rec.Texts(), "\n")
	if !strings.Contains(texts, "Resuming task abc123") {
		t.Fatalf("no resume reply in:\n%s", texts)
	}

	// The end: the result replaces the status message; the last task
	// ending brings the conversation back to ALERT.
	tk.State, tk.Question, tk.Summary = task.Succeeded, "", "Added GET /health."
	tk.Files = []workspace.FileStat{{Path: "main.go", Added: 12, Removed: 1}}
	tk.Patch = strings.Repeat("+x\n", 600)
	e.tasks.set()
	e.rep.TaskUpdate(ctx, task.Update{Kind: task.Ended, Task: tk})
	if m := e.mode(t); m != modes.Alert {
		t.Fatalf("mode after the end = %s; want ALERT", m)
	}
	all := e.rec.Sent()
	end := all[len(all)-1].Reply
	if end.Key != "task:abc123" || !strings.Contains(end.Text, "✅ Task abc123 succeeded") || !strings.Contains(end.Text, "main.go +12 −1") ||
		!strings.Contains(end.Text, "Added GET /health.") || len(end.Files) != 1 || end.Files[0].Name != "abc123.patch" {
		t.Fatalf("result = %+v", end)
	}
}

func TestResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		task task.Task
		want []string
		file bool
	}{
		{"failed", task.Task{ID: "f1", State: task.Failed, ExitCode: 3, Error: "exited with code 3: Error: boom", StderrTail: "Error: boom\n"}, []string{"❌ Task f1 failed", "exit code 3", "Error: boom"}, false},
		{"cancelled keeps work", task.Task{ID: "c1", State: task.Cancelled, Error: "cancelled by the owner", Branch: "fetch/c1", Files: []workspace.FileStat{{Path: "a", Added: 1}}, Patch: "+a\n"}, []string{"⏹️ Task c1 was cancelled", "partial work is kept", "```diff\n+a\n```"}, false},
		{"attention", task.Task{ID: "n1", State: task.NeedsAttention, Error: "the harness exited without a final result"}, []string{"needs your attention", "without a final result"}, false},
		{"long diff attached", task.Task{ID: "l1", State: task.Succeeded, Files: []workspace.FileStat{{Path: "a", Added: 500}}, Patch: strings.Repeat("+line\n", 500)}, []string{"diff is attached"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := progress.Result(tc.task)
			for _, w := range tc.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("result lacks %q:\n%s", w, r.Text)
				}
			}
			if (len(r.Files) > 0) != tc.file || len([]rune(r.Text)) > 2000 {
				t.Errorf("files = %d, %d characters", len(r.Files), len([]rune(r.Text)))
			}
		})
	}
}
