package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// taskVars is the environment of fetch task commands in a test: a fresh
// data directory and the kennel image with the scripted fake CLIs. The
// workspace "app" exists; its kennel container is removed afterwards.
func taskVars(t *testing.T) map[string]string {
	t.Helper()
	image := testkit.HarnessImage(t)
	// A task's worker is this test binary.
	t.Setenv(asFetchEnv, "1")
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	vars := map[string]string{"FETCH_DATA_DIR": dir, "FETCH_KENNEL_IMAGE": image}
	cleanEgress(t, vars)
	cfg, err := loadConfig(envOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := newWorkspaces(cfg, quietLog(), nil).Create(t.Context(), "app", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		docker, err := kennel.NewDockerClient("")
		if err != nil {
			return
		}
		defer docker.Close()
		if k, err := kennel.New(docker, kennel.Config{Image: image}, nil); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			k.Remove(ctx, ws.Path)
		}
	})
	return vars
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestTaskRunWaitExitCodes(t *testing.T) {
	vars := taskVars(t)
	for _, tc := range []struct {
		goal  string
		code  int
		state task.State
	}{
		{"write the notes", 0, task.Succeeded},
		{"break it [scenario:fail:4]", 1, task.Failed},
		{"ask first [scenario:question]", 2, task.WaitingInput},
	} {
		code, out, errs := runFetch(t, vars, "", "task", "run", "--workspace", "app", "--wait", tc.goal)
		if code != tc.code {
			t.Fatalf("%q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.goal, code, tc.code, out, errs)
		}
		id := strings.Fields(out)[1]
		_, show, _ := runFetch(t, vars, "", "task", "show", "--json", id)
		var got task.Task
		if err := json.Unmarshal([]byte(show), &got); err != nil || got.State != tc.state {
			t.Fatalf("%q: show = %s (%v); want state %s", tc.goal, show, err, tc.state)
		}
		if tc.state == task.WaitingInput {
			// Answer it so that the workspace is free for the next one.
			if code, out, errs := runFetch(t, vars, "", "task", "answer", id, "append"); code != 0 || !strings.Contains(out, "succeeded") {
				t.Fatalf("answer: exit %d\n%s\n%s", code, out, errs)
			}
		}
	}

	// Cancelled from another command while --wait follows it: exit 3.
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		code := run(t.Context(), []string{"task", "run", "--workspace", "app", "--wait", "hang [scenario:hang]"}, envOf(vars), strings.NewReader(""), pw, io.Discard)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	var id string
	for sc.Scan() {
		line := sc.Text()
		if id == "" && strings.HasPrefix(line, "Task ") {
			id = strings.Fields(line)[1]
		}
		if strings.Contains(line, "$ sleep infinity") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if code, out, errs := runFetch(t, vars, "", "task", "cancel", id); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, out, errs)
	}
	if code := <-done; code != 3 {
		t.Fatalf("cancelled --wait: exit %d; want 3", code)
	}

	// ls, show and log read the same database.
	_, ls, _ := runFetch(t, vars, "", "task", "ls")
	if n := strings.Count(ls, "app"); n != 4 || !strings.Contains(ls, "cancelled") {
		t.Fatalf("ls:\n%s", ls)
	}
	code, log, errs := runFetch(t, vars, "", "task", "log", "--json", id)
	if code != 0 || !strings.Contains(log, `"kind":"state"`) || !strings.Contains(log, `"to":"cancelled"`) {
		t.Fatalf("log: exit %d\n%s\n%s", code, log, errs)
	}
}

func TestTaskCommandsBadInput(t *testing.T) {
	vars := map[string]string{"FETCH_DATA_DIR": t.TempDir()}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"task"}, exitUsage, "subcommand is required"},
		{[]string{"task", "frob"}, exitUsage, `unknown subcommand "frob"`},
		{[]string{"task", "run", "goal"}, exitUsage, "which workspace? fetch task run --workspace NAME"},
		{[]string{"task", "run", "--workspace", "../x", "goal"}, exitFailed, "not a path"},
		{[]string{"task", "run", "--workspace", "nope", "goal"}, exitFailed, "no such workspace"},
		{[]string{"task", "run", "--workspace", "nope", "--harness", "amp", "goal"}, exitFailed, `unknown harness "amp"`},
		{[]string{"task", "run", "--workspace", "w", strings.Repeat("x", 2001)}, exitFailed, "limit is 2000"},
		{[]string{"task", "show", "nope"}, exitFailed, "no such task"},
		{[]string{"task", "show"}, exitUsage, "fetch task show: takes 1 argument"},
		{[]string{"task", "run", "--bogus", "goal"}, exitUsage, "fetch task run: flag provided but not defined: -bogus"},
	} {
		code, _, errs := runFetch(t, vars, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("fetch %v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	db, err := store.Open(t.Context(), filepath.Join(vars["FETCH_DATA_DIR"], "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM tasks").Scan(&n); err != nil || n != 0 {
		t.Fatalf("tasks after refused commands: %d, %v", n, err)
	}
}

// TestTaskRunDetached: without --wait, fetch task run prints the id and
// returns; a worker process runs the task to its end.
func TestTaskRunDetached(t *testing.T) {
	vars := taskVars(t)
	code, out, errs := runFetch(t, vars, "", "task", "run", "--workspace", "app", "a quick one")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	id := strings.TrimSpace(out)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, show, _ := runFetch(t, vars, "", "task", "show", "--json", id)
		var got task.Task
		if err := json.Unmarshal([]byte(show), &got); err != nil {
			t.Fatalf("show %s: %v\n%s", id, err, show)
		}
		if got.State == task.Succeeded {
			break
		}
		if got.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("task = %+v", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestChatSeesAndStopsTasks: fetch chat's /status shows the terminal
// conversation's running task, run by another engine on the same data
// directory (as fetch serve would), and /stop cancels it.
func TestChatSeesAndStopsTasks(t *testing.T) {
	vars := taskVars(t)
	cfg, err := loadConfig(envOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(cfg.Secrets...)
	if err != nil {
		t.Fatal(err)
	}
	db, err := openStore(t.Context(), cfg, red)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	working := make(chan struct{}, 1)
	ks, err := newKennels(t.Context(), cfg, db, quietLog(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ks.release()
	engine, _, err := newEngine(cfg, db, quietLog(), ks, updateFunc(func(u task.Update) {
		if u.Kind == task.Progress && u.Event.Command != "" {
			select {
			case working <- struct{}{}:
			default:
			}
		}
	}), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())
	tk, err := engine.Create(t.Context(), task.Request{ConversationID: "term:local", Workspace: "app", Goal: "the long suite [scenario:hang]"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-working:
	case <-time.After(time.Minute):
		t.Fatal("the task never got to work")
	}
	code, out, errs := runFetch(t, vars, "/status\n/stop\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "Task: "+tk.ID+" on claude in app") || !strings.Contains(out, "Stopping task "+tk.ID) {
		t.Fatalf("chat output:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	got, err := engine.Wait(ctx, tk.ID)
	if err != nil || got.State != task.Cancelled {
		t.Fatalf("task = %+v, %v", got, err)
	}
}

type updateFunc func(task.Update)

func (f updateFunc) TaskUpdate(_ context.Context, u task.Update) { f(u) }
