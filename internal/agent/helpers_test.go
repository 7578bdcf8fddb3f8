package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
)

const conv = "term:owner"

// rig is an agent wired to a real store, the fake OpenRouter through the
// real client, and in-memory workspaces and tasks.
type rig struct {
	t     *testing.T
	db    *store.DB
	llm   *testkit.OpenRouter
	ws    *workspace.Registry
	tasks *memTasks
	agent *agent.Agent
}

// promptOpen tells whether the agent left a prompt of kind open.
func (r *rig) promptOpen(kind store.PromptKind) bool {
	p, err := r.db.OpenPrompt(r.t.Context(), conv)
	return err == nil && p.Kind == kind
}

func newRig(t *testing.T, mod func(*rig, *agent.Config)) *rig {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureConversation(t.Context(), conv, "term", "owner"); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, db: db, llm: testkit.NewOpenRouter(t), ws: workspace.New(filepath.Join(t.TempDir(), "workspaces"), slog.New(slog.DiscardHandler)), tasks: &memTasks{}}
	if _, err := r.ws.Create(t.Context(), "demo", "go"); err != nil {
		t.Fatal(err)
	}
	client, err := llm.New(llm.Config{BaseURL: r.llm.URL(), APIKey: testkit.OpenRouterKey, Model: "test/model", BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{
		Store: db, LLM: client, Identity: identity.New("", slog.New(slog.DiscardHandler)),
		Workspaces: r.ws, Tasks: r.tasks, Running: r.tasks, Logger: slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(r, &cfg)
	}
	if r.agent, err = agent.New(cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) say(kind intent.Kind, text string) []chat.Reply {
	r.t.Helper()
	replies, err := r.agent.Respond(r.t.Context(), agent.Turn{
		ConversationID: conv, UserID: "owner", Role: chat.Owner, Text: text,
		Intent: intent.Result{Kind: kind, Rule: "test"},
	})
	if err != nil {
		r.t.Fatalf("respond to %q: %v", text, err)
	}
	return replies
}

func (r *rig) createWorkspace(name string) {
	r.t.Helper()
	if _, err := r.ws.Create(r.t.Context(), name, "go"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) selectWorkspace(name string) {
	r.t.Helper()
	if err := r.db.SetWorkspace(r.t.Context(), conv, name); err != nil {
		r.t.Fatal(err)
	}
}

// toolResults are the tool messages of request i, by call id.
func (r *rig) toolResults(i int) map[string]string {
	r.t.Helper()
	reqs := r.llm.Requests()
	if i >= len(reqs) {
		r.t.Fatalf("no request %d (have %d)", i, len(reqs))
	}
	out := map[string]string{}
	for _, m := range reqs[i].Body.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content.Text
		}
	}
	return out
}

func texts(rs []chat.Reply) string {
	var b []string
	for _, r := range rs {
		b = append(b, r.Text)
	}
	return strings.Join(b, "\n")
}

// hasWorkspace tells whether the registry has a workspace of that name.
func (r *rig) hasWorkspace(name string) bool {
	r.t.Helper()
	infos, err := r.ws.List(r.t.Context())
	if err != nil {
		r.t.Fatal(err)
	}
	for _, i := range infos {
		if i.Name == name {
			return true
		}
	}
	return false
}

// memTasks stands in for the task engine where a test is about the agent,
// not the kennel (TestTaskCreateReachesTheRealEngine runs the real one).
type memTasks struct {
	mu      sync.Mutex
	created []task.Task
	planned []string // ids of the tasks made with CreatePlan
	told    []string // "ID: text" of each Tell
	retried []string // ids of Retry
}

func (m *memTasks) Create(_ context.Context, r task.Request) (task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := task.Task{ID: fmt.Sprintf("t-%d", len(m.created)+101), ConversationID: r.ConversationID, Workspace: r.Workspace, Goal: r.Goal, Harness: or(r.Harness, "claude"), State: task.Running, Branch: "fetch/t", Mode: r.Mode}
	m.created = append(m.created, t)
	return t, nil
}

// CreatePlan records the task as planned (m.planned) and creates it.
func (m *memTasks) CreatePlan(ctx context.Context, r task.Request) (task.Task, error) {
	t, err := m.Create(ctx, r)
	m.mu.Lock()
	m.planned = append(m.planned, t.ID)
	m.mu.Unlock()
	return t, err
}

func (m *memTasks) Get(_ context.Context, id string) (task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.created {
		if t.ID == id {
			return t, nil
		}
	}
	return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
}

// Active lists the conversation's tasks that run or wait; a test sets a
// task's State to make it wait.
func (m *memTasks) Active(_ context.Context, conversationID string) ([]task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []task.Task
	for _, t := range m.created {
		if t.ConversationID == conversationID && t.State.Active() {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m *memTasks) Cancel(context.Context, string) error { return nil }

// Tell records the message; a running task takes it mid-run, an ended
// one continues.
func (m *memTasks) Tell(ctx context.Context, id, text, _ string, _ ...task.Attachment) (task.Told, error) {
	t, err := m.Get(ctx, id)
	if err != nil {
		return task.Told{}, err
	}
	m.mu.Lock()
	m.told = append(m.told, id+": "+text)
	m.mu.Unlock()
	if t.State.Terminal() {
		return task.Told{How: task.TellContinued, Task: t}, nil
	}
	return task.Told{How: task.TellSent, Task: t}, nil
}

func (m *memTasks) Retry(ctx context.Context, id string) error {
	if _, err := m.Get(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	m.retried = append(m.retried, id)
	m.mu.Unlock()
	return nil
}
func (m *memTasks) Respond(context.Context, string, string) error { return nil }
func (m *memTasks) RequestShip(context.Context, string) error     { return nil }
func (m *memTasks) Running(context.Context, string) (*instincts.Task, error) {
	return nil, nil
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// clientWithKey is a client of the rig's fake that sends key.
func (r *rig) clientWithKey(key string) *llm.Client {
	r.t.Helper()
	c, err := llm.New(llm.Config{BaseURL: r.llm.URL(), APIKey: key, Model: "test/model", BaseDelay: time.Millisecond})
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func storeInbound(text string) store.NewInbound {
	return store.NewInbound{ConversationID: conv, UserID: "owner", Body: text, InHistory: true}
}

type recordResolver struct {
	prompt store.Prompt
	answer string
}

func (r *recordResolver) Resolved(_ context.Context, p store.Prompt, answer string, _ chat.Role) ([]chat.Reply, error) {
	r.prompt, r.answer = p, answer
	return nil, nil
}
