package journey

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// taskAsk is the model's call of task_ask.
func taskAsk(id, question, ws, harness string) testkit.Step {
	args, _ := json.Marshal(map[string]string{"question": question, "workspace": ws, "harness": harness})
	return testkit.Use(testkit.Call{ID: id, Name: "task_ask", Arguments: string(args)})
}

// J: a question about the code too big for a few lookups goes to a coding
// CLI in ask mode. The owner asks; the model (an inquiry) calls task_ask;
// the CLI runs read-only in the kennel and answers; the answer arrives as
// the task's result message. The workspace, .git included, is
// byte-identical afterwards, and no fetch/* branch exists.
func TestJourneyQuestionGoesToAHarnessReadOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	ws := w.workspacePath("app")
	before := testkit.TreeHash(t, ws)
	w.start()

	w.llm.Script(
		taskAsk("ask-1", "How does the app start up, end to end? [scenario:answer]", "app", "claude"),
		testkit.Say("I asked claude to read the code; its answer will follow."),
	)
	m := w.send(ownerID, "how does the app workspace start up, end to end?")
	w.await(m, regexp.MustCompile(`^I asked claude to read the code`), "the agent's answer")
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task \S+ succeeded on app`), "the harness's answer")
	if !strings.Contains(res.Text, "ANSWER: the working directory holds") {
		t.Errorf("the result %q does not carry the CLI's answer", res.Text)
	}
	if strings.Contains(res.Text, "Branch ") || strings.Contains(res.Text, "fetch/") {
		t.Errorf("the result of a question names a branch: %q", res.Text)
	}
	// The inquiry was offered task_ask (the call was carried out, not
	// refused as unavailable).
	for _, r := range w.llm.Requests() {
		for _, msg := range r.Body.Messages {
			if msg.Role == "tool" && strings.Contains(msg.Content.Text, "not available") {
				t.Errorf("task_ask was refused: %q", msg.Content.Text)
			}
		}
	}
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) == 0 }); !ok {
		t.Errorf("CLI processes left in the kennel: %q", ps)
	}

	if after := testkit.TreeHash(t, ws); after != before {
		t.Error("the workspace (or its .git) changed during a read-only question")
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "refs", "heads", "fetch")); !os.IsNotExist(err) {
		t.Errorf("a fetch/* branch exists (refs/heads/fetch: %v)", err)
	}
	if packed, err := os.ReadFile(filepath.Join(ws, ".git", "packed-refs")); err == nil && strings.Contains(string(packed), "refs/heads/fetch/") {
		t.Errorf("a fetch/* branch exists in packed-refs")
	}
	if _, err := os.Stat(filepath.Join(ws, ".fetch")); !os.IsNotExist(err) {
		t.Errorf("a worktree directory was made: %v", err)
	}
}
