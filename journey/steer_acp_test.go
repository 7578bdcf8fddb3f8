package journey

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// Steering Gemini CLI and Qwen Code, which run two-way through ACP (the
// Agent Client Protocol): the scripted gemini and qwen --acp ask
// session/request_permission before they run a command, in the real
// kennel. ACP has no plan mode Fetch drives: under supervised autonomy the
// task runs as asked, and asks before each command.

// acpCLIs are the CLIs that steer through ACP.
var acpCLIs = []string{"gemini", "qwen"}

// taskCreateOn is the model's call of task_create on a given harness.
func taskCreateOn(id, goal, ws, harness string) testkit.Step {
	args, _ := json.Marshal(map[string]string{"goal": goal, "workspace": ws, "harness": harness})
	return testkit.Use(testkit.Call{ID: id, Name: "task_create", Arguments: string(args)})
}

// startSupervisedOn starts a task on cli under supervised autonomy, where
// the owner approves the start, and returns the mark before the request
// and the task's status message.
func (w *world) startSupervisedOn(cli, request, goal string) (mark, seen) {
	w.t.Helper()
	w.llm.Script(taskCreateOn("call-app", goal, "app", cli), testkit.Say("Started it."))
	m := w.send(ownerID, request)
	ask, approve := w.approval(m, regexp.MustCompile(`(?s)approval.*task_create`), "Approve")
	w.d.Click(ownerID, ask.Msg.ID, approve)
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(`+cli+`\) — running`), "the task's status message")
	return m, status
}

// S1 over ACP: the CLI asks to force-push; the owner denies it with a
// reason, and is told that ACP could not carry the reason; the CLI gets
// the rejection and finishes without pushing. It then
// asks twice for npm install: "Allow for this task" on the first lets the
// second through without asking.
func TestJourneySteerACPDenyAndAllowForTask(t *testing.T) {
	t.Parallel()
	for _, cli := range acpCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			w.supervised()
			m, status := w.startSupervisedOn(cli, "clean up the build scripts in app", "clean up the build scripts [ask-permission:Bash:git push --force] [ask-permission:Bash:npm install left-pad] [ask-permission:Bash:npm install left-pad]")
			id := taskID(t, status.Text)

			push := w.awaitNew(m, requestRe(id, "git push --force"), "the request to force-push")
			if !strings.Contains(push.Text, "deny list") && !strings.Contains(push.Text, "remote") {
				t.Errorf("the force-push request does not warn that it is on the deny list: %q", push.Text)
			}
			if !strings.Contains(push.Text, "cannot be told a reason") {
				t.Errorf("the request does not say that ACP carries no reason: %q", push.Text)
			}
			w.button(push, "Deny")
			// ACP has no field for a reason: the owner is told it did not go.
			m = w.send(ownerID, "no, because we never force-push")
			w.awaitNew(m, regexp.MustCompile(`^Denied\. The CLI is told no, but not your reason`), "the denial's reply")
			w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(git push --force\) — denied by `+ownerID), "the request message closed")

			npm := w.awaitNew(m, requestRe(id, "npm install left-pad"), "the request to run npm install")
			m = w.mark(ownerID)
			w.d.Click(ownerID, npm.Msg.ID, w.button(npm, "Allow for this task"))
			w.awaitNew(m, regexp.MustCompile(`^Allowed, and shell `+"`npm install[^`]*`"+` is allowed for the rest of task `+id), "the allow's reply")

			res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
			for _, want := range []string{"Did not run `git push --force`: Tool \"run_shell_command\" was canceled by the user.", "Ran `npm install left-pad`. Ran `npm install left-pad`."} {
				if !strings.Contains(res.Text, want) {
					t.Errorf("result %q does not say %q", res.Text, want)
				}
			}
			if strings.Contains(res.Text, "Ran `git push --force`") {
				t.Errorf("the CLI ran the denied push: %q", res.Text)
			}
			if n := len(w.findAll(m, requestRe(id, "npm install left-pad"))); n != 0 {
				t.Errorf("the second npm install asked again (%d request messages after Allow for this task)", n)
			}
		})
	}
}

// S4 over ACP: /stop while a request waits answers at once, closes the
// request and cancels the task.
func TestJourneySteerACPStopWhileRequestPending(t *testing.T) {
	t.Parallel()
	for _, cli := range acpCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			w.supervised()
			m, status := w.startSupervisedOn(cli, "tidy app", "tidy [ask-permission:Bash:make deploy]")
			id := taskID(t, status.Text)
			w.awaitNew(m, requestRe(id, "make deploy"), "the request")
			m = w.mark(ownerID)
			sent := time.Now()
			w.d.DM(ownerID, "/stop")
			w.stopWithin(m, sent, regexp.MustCompile(`Stopping task `+id))
			w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(make deploy\) — closed: the task's run ended`), "the request closed")
			w.await(m, regexp.MustCompile(`Task `+id+` was cancelled`), "the task cancelled")
		})
	}
}
