package progress_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/task"
)

func sends(r chat.Reply) []string {
	var out []string
	for _, a := range r.Actions {
		out = append(out, a.Label+"="+a.Send)
	}
	return out
}

// TestShippedSaysWhatTheChecksSaid: a draft whose check failed has Ship
// anyway and no Merge; work held back has Ship anyway on its result and
// its message; a task pushed alone says so.
func TestShippedSaysWhatTheChecksSaid(t *testing.T) {
	checks := "❌ `sh ./test.sh`: failed (exit 1)\n```\n--- FAIL\n```"
	draft := task.Task{ID: "t1", Workspace: "app", Goal: "g", State: task.Succeeded, Checks: checks,
		ShipError: "a check failed: its pull request is a draft and is not merged on its own",
		PR:        ship.PR{Number: 3, URL: "https://gh/acme/app/pull/3", State: "open", Draft: true}}
	r := progress.Shipped(draft, "")
	if !strings.Contains(r.Text, "Pull request #3 opened as a draft") || !strings.Contains(r.Text, "--- FAIL") ||
		!slices.Contains(sends(r), "Ship anyway=/pr anyway t1") || slices.ContainsFunc(sends(r), func(s string) bool { return strings.HasPrefix(s, "Merge=") }) {
		t.Errorf("draft: %q %q", r.Text, sends(r))
	}
	held := task.Task{ID: "t2", Workspace: "app", Goal: "g", State: task.NeedsAttention, Checks: checks, Branch: "fetch/t2",
		ShipError: "a check failed, so nothing was pushed and no pull request was opened (app holds failing work: /checks failing draft opens a draft instead)",
		Error:     "Continue the task to fix its work, or ship it anyway (/pr anyway t2)."}
	for _, r := range []chat.Reply{progress.Shipped(held, ""), progress.Result(held)} {
		if !strings.Contains(r.Text, "no pull request was opened") || !strings.Contains(r.Text, "`sh ./test.sh`: failed (exit 1)") ||
			!slices.Contains(sends(r), "Ship anyway=/pr anyway t2") {
			t.Errorf("held: %q %q", r.Text, sends(r))
		}
	}
	pushed := task.Task{ID: "t3", Workspace: "app", Goal: "g", State: task.Succeeded, Branch: "fetch/t3", Pushed: "abc", ShipAs: ship.PushOnly}
	if r := progress.Result(pushed); !strings.Contains(r.Text, "Pushed branch fetch/t3 to GitHub; no pull request, as asked.") {
		t.Errorf("pushed: %q", r.Text)
	}
	if r := progress.Shipped(pushed, ""); !strings.Contains(r.Text, "was pushed to GitHub; no pull request") {
		t.Errorf("pushed: %q", r.Text)
	}
}
