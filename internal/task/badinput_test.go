package task_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// TestBadInputCreatesNothing needs no kennel: every request here is
// refused before anything runs.
func TestBadInputCreatesNothing(t *testing.T) {
	e := newEngine(t, nil, engineOptions{})
	ws, err := e.ws.Create(t.Context(), "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  task.Request
		want string
		is   error
	}{
		{"unknown workspace", task.Request{Workspace: "nope", Goal: "x"}, "no such workspace", workspace.ErrNotFound},
		{"traversal", task.Request{Workspace: "../x", Goal: "x"}, "not a path", workspace.ErrInvalidName},
		{"absolute path", task.Request{Workspace: "/etc", Goal: "x"}, "not a path", workspace.ErrInvalidName},
		{"nested traversal", task.Request{Workspace: "a/../../x", Goal: "x"}, "not a path", workspace.ErrInvalidName},
		{"hidden", task.Request{Workspace: ".git", Goal: "x"}, "starts with a dot", workspace.ErrInvalidName},
		{"empty workspace", task.Request{Workspace: "", Goal: "x"}, "empty", workspace.ErrInvalidName},
		{"goal too long", task.Request{Workspace: "demo", Goal: strings.Repeat("é", task.MaxGoalLen+1)}, "2001 characters", task.ErrInvalid},
		{"empty goal", task.Request{Workspace: "demo", Goal: "  \n"}, "goal is empty", task.ErrInvalid},
		{"unknown harness", task.Request{Workspace: "demo", Goal: "x", Harness: "amp"}, `unknown harness "amp"`, task.ErrInvalid},
		// The harnesses are listed as words, not as a Go slice.
		{"a CLI's name", task.Request{Workspace: "demo", Goal: "x", Harness: "cursor-agent"}, `unknown harness "cursor-agent" (the harnesses: aider, claude, codex, copilot, cursor, `, task.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Create(t.Context(), tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) {
				t.Fatalf("Create(%+v) = %v; want an error with %q wrapping %v", tc.req, err, tc.want, tc.is)
			}
		})
	}
	// A goal of exactly the limit is fine as far as validation goes.
	if err := task.ValidateGoal(strings.Repeat("é", task.MaxGoalLen)); err != nil {
		t.Fatalf("goal at the limit: %v", err)
	}
	ts, err := e.List(t.Context(), task.Filter{})
	if err != nil || len(ts) != 0 {
		t.Fatalf("tasks after refused requests: %v, %v", ts, err)
	}
	if _, err := os.Stat(filepath.Join(ws.Path, ".fetch")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a worktree directory appeared: %v", err)
	}
	entries, _ := os.ReadDir(e.ws.Root())
	if len(entries) != 1 {
		t.Fatalf("workspaces root holds %d entries; want only demo", len(entries))
	}
}
