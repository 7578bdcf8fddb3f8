package progress_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// TestQuestionThroughChat wires the real engine, kennel, reporter and
// conversation manager as fetch chat does: a task asks, the owner answers
// in the chat, the task resumes and succeeds, and the mode follows
// (WORKING, WAITING, WORKING, ALERT).
func TestQuestionThroughChat(t *testing.T) {
	docker := testkit.RequireDocker(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kennel.New(docker, kennel.Config{Image: testkit.HarnessImage(t), Instance: "fetch-progress-test", Grace: time.Second}, log)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	db, err := store.Open(t.Context(), filepath.Join(dir, "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws := workspace.New(filepath.Join(dir, "workspaces"), log).RunAs(10001, 10001)
	info, err := ws.Create(t.Context(), "app", "")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Remove(context.Background(), info.Path)
	if _, err := db.EnsureConversation(t.Context(), conv, "term", "1"); err != nil {
		t.Fatal(err)
	}

	engine := task.New(task.Config{Store: db, Workspaces: ws, Runner: &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry()}, Adopt: true, Logger: log})
	chatRef := &struct{ *conversation.Manager }{}
	rep := progress.New(progress.Config{Chat: chatRef, Store: db, Tasks: engine, Logger: log})
	engine.Observe(rep)
	rec := testkit.NewRecorder()
	chatRef.Manager = conversation.New(conversation.Config{
		Store: db, Senders: map[string]chat.Sender{"term": rec}, Logger: log, Resolver: rep,
		Tasks: progress.Running{Tasks: engine}, RoleOf: func(_, _ string) chat.Role { return chat.Owner },
	})
	mgr := chatRef.Manager
	if err := mgr.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	if err := engine.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())

	mode := func() modes.Mode {
		mgr.Idle(t.Context(), conv)
		st, _ := db.Mode(t.Context(), conv)
		return modes.Mode(st.Mode)
	}
	created, err := engine.Create(t.Context(), task.Request{ConversationID: conv, Workspace: "app", Goal: "update the notes [scenario:question]"})
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, rec, "asks:")
	if m := mode(); m != modes.Waiting {
		t.Fatalf("mode while the task asks = %s", m)
	}
	if err := mgr.Receive(t.Context(), chat.Message{Channel: "term", ConversationID: conv, UserID: "1", Text: "append it"}); err != nil {
		t.Fatal(err)
	}
	waitText(t, rec, "✅ Task "+created.ID+" succeeded")
	if m := mode(); m != modes.Alert {
		t.Fatalf("mode after the task = %s", m)
	}
	got, err := engine.Get(t.Context(), created.ID)
	if err != nil || got.State != task.Succeeded || got.Runs != 2 {
		t.Fatalf("task = %+v, %v", got, err)
	}
	hist, _ := db.ModeHistory(t.Context(), conv)
	var path []string
	for _, h := range hist {
		path = append(path, h.To)
	}
	if strings.Join(path, ",") != "ALERT,WORKING,WAITING,WORKING,ALERT" {
		t.Fatalf("modes: %v", path)
	}
	for _, s := range rec.Sent() {
		if strings.Contains(s.Reply.Text, "Task "+created.ID) && s.Reply.Key != progress.Key(created.ID) && !strings.Contains(s.Reply.Text, "asks:") && !strings.Contains(s.Reply.Text, "Resuming") {
			t.Errorf("a status message without the task's key: %q", s.Reply.Text)
		}
	}
}

// waitText waits until a reply containing s was sent.
func waitText(t *testing.T, rec *testkit.Recorder, s string) {
	t.Helper()
	for n := 1; ; n++ {
		for _, r := range rec.WaitFor(t, n) {
			if strings.Contains(r.Reply.Text, s) {
				return
			}
		}
	}
}
