package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/modes"
)

// runtime is the conversation runtime as cmd/fetch wires it, with the real
// engine and kennel: feed, engine, Manager.
type runtime struct {
	db     *store.DB
	rec    *testkit.Recorder
	engine *task.Engine
	mgr    *conversation.Manager
	close  func()
}

// newRuntime wires the runtime over workspaces (each created empty) and
// opens it; it closes at cleanup. resolver answers the agent's prompts.
func newRuntime(t *testing.T, resolver conversation.Resolver, workspaces ...string) *runtime {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	k := testKennel(t)
	ws := workspace.New(filepath.Join(dir, "workspaces"), quiet()).RunAs(10001, 10001)
	for _, name := range workspaces {
		info, err := ws.Create(t.Context(), name, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Remove(context.Background(), info.Path) })
	}
	return openRuntime(t, openDB(t, filepath.Join(dir, "fetch.db")), k, ws, resolver)
}

// testKennel is a kennel on the harness test image.
func testKennel(t *testing.T) *kennel.Kennel {
	t.Helper()
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{Image: testkit.HarnessImage(t), Instance: "fetch-conv-test", Grace: time.Second}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// openRuntime wires the runtime on db as cmd/fetch does and opens it; it
// closes at cleanup (or earlier, by close).
func openRuntime(t *testing.T, db *store.DB, k *kennel.Kennel, ws *workspace.Registry, resolver conversation.Resolver) *runtime {
	t.Helper()
	log := quiet()
	rec := testkit.NewRecorder()
	updates := task.NewFeed()
	engine := task.New(task.Config{Store: db, Workspaces: ws, Runner: &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry()}, Observer: updates, Adopt: true, Logger: log})
	mgr := conversation.New(conversation.Config{
		Store: db, Senders: map[string]chat.Sender{"term": rec}, Logger: log, Resolver: resolver, Tasks: engine, Updates: updates,
		RoleOf: func(_, _ string) chat.Role { return chat.Owner }, NoAgent: "no agent",
	})
	ctx := t.Context()
	if err := mgr.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := engine.Open(ctx); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := errors.Join(engine.Close(cctx), mgr.Close(cctx)); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	var once sync.Once
	r := &runtime{db: db, rec: rec, engine: engine, mgr: mgr, close: func() { once.Do(stop) }}
	t.Cleanup(r.close)
	return r
}

func (r *runtime) say(t *testing.T, conversationID, text string) {
	t.Helper()
	if err := r.mgr.Receive(t.Context(), chat.Message{Channel: "term", ConversationID: conversationID, UserID: "1", Text: text}); err != nil {
		t.Fatal(err)
	}
}

// waitText waits until a reply to conversationID containing s was sent
// and returns it.
func waitText(t *testing.T, rec *testkit.Recorder, conversationID, s string) testkit.Sent {
	t.Helper()
	for n := 1; ; n++ {
		for _, r := range rec.WaitFor(t, n) {
			if r.ConversationID == conversationID && strings.Contains(r.Reply.Text, s) {
				return r
			}
		}
	}
}

func (r *runtime) mode(t *testing.T, conversationID string) modes.Mode {
	t.Helper()
	r.mgr.Idle(t.Context(), conversationID)
	st, _ := r.db.Mode(t.Context(), conversationID)
	return modes.Mode(st.Mode)
}

// TestQuestionThroughChat: a task asks, the owner answers in the chat,
// the task resumes and succeeds, and the mode follows (WORKING, WAITING,
// WORKING, ALERT). The result is a new message besides the edited status.
func TestQuestionThroughChat(t *testing.T) {
	r := newRuntime(t, nil, "app")
	if _, err := r.db.EnsureConversation(t.Context(), conv, "term", "1"); err != nil {
		t.Fatal(err)
	}
	created, err := r.engine.Create(t.Context(), task.Request{ConversationID: conv, Workspace: "app", Goal: "update the notes [scenario:question]"})
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, r.rec, conv, "asks:")
	if m := r.mode(t, conv); m != modes.Waiting {
		t.Fatalf("mode while the task asks = %s", m)
	}
	r.say(t, conv, "append it")
	result := waitText(t, r.rec, conv, "✅ Task "+created.ID+" succeeded")
	if result.Reply.Key != "" {
		t.Errorf("the result is an edit (key %q); want a new message", result.Reply.Key)
	}
	if m := r.mode(t, conv); m != modes.Alert {
		t.Fatalf("mode after the task = %s", m)
	}
	got, err := r.engine.Get(t.Context(), created.ID)
	if err != nil || got.State != task.Succeeded || got.Runs != 2 {
		t.Fatalf("task = %+v, %v", got, err)
	}
	hist, _ := r.db.ModeHistory(t.Context(), conv)
	var path []string
	for _, h := range hist {
		path = append(path, h.To)
	}
	if strings.Join(path, ",") != "ALERT,WORKING,WAITING,WORKING,ALERT" {
		t.Fatalf("modes: %v", path)
	}
	// The status message's last edit may be spaced after the result (edits
	// are paced); it must come.
	edited := func() bool {
		for _, s := range r.rec.Sent() {
			if s.Reply.Key == progress.Key(created.ID) && strings.Contains(s.Reply.Text, "succeeded") {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); !edited() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !edited() {
		t.Error("the status message was not edited to the end")
	}
}

// TestStopDuringTaskAnswers is the first wave's deadlock: /stop while a
// task runs a CLI that ignores SIGINT. Receive returns without waiting for
// the run, the stop is answered, the task's end follows as a new message,
// and the conversation answers afterwards.
func TestStopDuringTaskAnswers(t *testing.T) {
	r := newRuntime(t, nil, "app")
	if _, err := r.db.EnsureConversation(t.Context(), conv, "term", "1"); err != nil {
		t.Fatal(err)
	}
	created, err := r.engine.Create(t.Context(), task.Request{ConversationID: conv, Workspace: "app", Goal: "run forever [scenario:ignore-int]"})
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, r.rec, conv, "Task "+created.ID+" on app")
	r.say(t, conv, "/stop")
	waitText(t, r.rec, conv, "Stopping task "+created.ID)
	waitText(t, r.rec, conv, "Task "+created.ID+" was cancelled")
	r.say(t, conv, "/status")
	waitText(t, r.rec, conv, "ALERT")
	if got, _ := r.engine.Get(t.Context(), created.ID); got.State != task.Cancelled {
		t.Fatalf("task state = %s", got.State)
	}
}

// approver resolves the agent's approvals as the agent does: a yes runs
// the action.
type approver struct {
	mu  sync.Mutex
	got []string
}

func (a *approver) Resolved(_ context.Context, p store.Prompt, answer string, _ chat.Role) ([]chat.Reply, error) {
	a.mu.Lock()
	a.got = append(a.got, p.Body+"="+answer)
	a.mu.Unlock()
	return []chat.Reply{chat.Text("did " + p.Body)}, nil
}

// TestEverythingAtOnce is the deadlock test of the runtime: at the same
// moment, a stop during a running task, an answer to a task's question,
// an approval, and reminders to all three conversations. Each conversation
// answers all of it, and keeps answering.
func TestEverythingAtOnce(t *testing.T) {
	a := &approver{}
	r := newRuntime(t, a, "one", "two")
	const stopConv, askConv, guardConv = "c-stop", "c-ask", "c-guard"
	for _, c := range []string{stopConv, askConv, guardConv} {
		if _, err := r.db.EnsureConversation(t.Context(), c, "term", "1"); err != nil {
			t.Fatal(err)
		}
	}
	running, err := r.engine.Create(t.Context(), task.Request{ConversationID: stopConv, Workspace: "one", Goal: "run forever [scenario:ignore-int]"})
	if err != nil {
		t.Fatal(err)
	}
	asking, err := r.engine.Create(t.Context(), task.Request{ConversationID: askConv, Workspace: "two", Goal: "update the notes [scenario:question]"})
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, r.rec, stopConv, "Task "+running.ID+" on one")
	waitText(t, r.rec, askConv, "asks:")
	// The agent's approval, as it opens one.
	m, err := modes.Load(t.Context(), r.db, guardConv, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fire(t.Context(), modes.Guarded, "delete demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.AddPrompt(t.Context(), store.Prompt{ConversationID: guardConv, Kind: store.Approval, Body: "delete demo"}); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	do := func(f func() error) {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- f() }()
	}
	say := func(c, text string) func() error {
		return func() error {
			return r.mgr.Receive(t.Context(), chat.Message{Channel: "term", ConversationID: c, UserID: "1", Text: text})
		}
	}
	do(say(stopConv, "/stop"))
	do(say(askConv, "append it"))
	do(say(guardConv, "yes"))
	for i, c := range []string{stopConv, askConv, guardConv} {
		do(func() error {
			return r.mgr.NotifyOnce(t.Context(), c, fmt.Sprintf("remind:%d", i), chat.Text("⏰ Reminder: "+c))
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Receive or NotifyOnce did not return within 30s: the runtime is deadlocked")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	waitText(t, r.rec, stopConv, "Stopping task "+running.ID)
	waitText(t, r.rec, stopConv, "Task "+running.ID+" was cancelled")
	waitText(t, r.rec, askConv, "Resuming task "+asking.ID)
	waitText(t, r.rec, askConv, "Task "+asking.ID+" succeeded")
	waitText(t, r.rec, guardConv, "did delete demo")
	for _, c := range []string{stopConv, askConv, guardConv} {
		waitText(t, r.rec, c, "⏰ Reminder: "+c)
		r.say(t, c, "/status")
	}
	for _, c := range []string{stopConv, askConv, guardConv} {
		waitText(t, r.rec, c, "ALERT since")
	}
	if len(a.got) != 1 || a.got[0] != "delete demo=yes" {
		t.Fatalf("approvals resolved: %v", a.got)
	}
}

// TestResultLostInACrashIsToldAtStart: a task ended while no conversation
// runtime told anyone (its process died between recording the end and
// queueing the result). The next start tells the owner, once; a start
// after that tells nothing again.
func TestResultLostInACrashIsToldAtStart(t *testing.T) {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	k := testKennel(t)
	ws := workspace.New(filepath.Join(dir, "workspaces"), quiet()).RunAs(10001, 10001)
	info, err := ws.Create(t.Context(), "app", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Remove(context.Background(), info.Path) })
	db := openDB(t, filepath.Join(dir, "fetch.db"))
	if _, err := db.EnsureConversation(t.Context(), conv, "term", "1"); err != nil {
		t.Fatal(err)
	}
	// The run whose result was lost: an engine nobody listens to.
	bare := task.New(task.Config{Store: db, Workspaces: ws, Runner: &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry()}, Logger: quiet()})
	if err := bare.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	created, err := bare.Create(t.Context(), task.Request{ConversationID: conv, Workspace: "app", Goal: "note it"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := bare.Wait(t.Context(), created.ID); err != nil || got.State != task.Succeeded {
		t.Fatalf("task = %+v, %v", got, err)
	}
	bare.Close(context.Background())

	r := openRuntime(t, db, k, ws, nil)
	waitText(t, r.rec, conv, "✅ Task "+created.ID+" succeeded")
	r.mgr.Idle(t.Context(), conv)
	r.close()
	r2 := openRuntime(t, db, k, ws, nil)
	r2.say(t, conv, "/status")
	waitText(t, r2.rec, conv, "since")
	for _, s := range r2.rec.Sent() {
		if strings.Contains(s.Reply.Text, created.ID) {
			t.Fatalf("told again after the next start: %q", s.Reply.Text)
		}
	}
}
