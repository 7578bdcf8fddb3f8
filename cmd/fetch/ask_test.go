package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/task"
)

// TestTaskRunAsk: fetch task run --ask answers a question read-only, with
// no branch; a harness without a read-only mode is refused.
func TestTaskRunAsk(t *testing.T) {
	vars := taskVars(t)
	code, out, errs := runFetch(t, vars, "", "task", "run", "--workspace", "app", "--ask", "--wait", "what is in here? [scenario:answer]")
	if code != 0 || !strings.Contains(out, "read-only, no branch") || !strings.Contains(out, "ANSWER: the working directory holds") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	id := strings.Fields(out)[1]
	_, show, _ := runFetch(t, vars, "", "task", "show", "--json", id)
	var got task.Task
	if err := json.Unmarshal([]byte(show), &got); err != nil || got.Mode != task.Ask || got.Branch != "" || got.State != task.Succeeded {
		t.Fatalf("show = %s (%v)", show, err)
	}
	code, out, errs = runFetch(t, vars, "", "task", "run", "--workspace", "app", "--ask", "--harness", "codex", "--wait", "why?")
	if code == 0 || !strings.Contains(out+errs, "no read-only mode") {
		t.Fatalf("codex --ask: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
