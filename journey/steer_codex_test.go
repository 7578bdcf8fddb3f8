package journey

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// Steering Codex, which runs two-way through `codex app-server`: the
// scripted codex asks item/commandExecution/requestApproval before it runs
// a command and item/tool/requestUserInput to ask a question, in the real
// kennel. Codex has no plan mode Fetch drives: under supervised autonomy
// the task runs as asked, and asks before each command.

// S1 on Codex: the CLI asks to force-push; the owner denies it with a
// reason and is told that Codex could not be given the reason; the CLI gets
// the decline and finishes without pushing. It then asks twice for npm
// install: "Allow for this task" on the first lets the second through
// without asking.
func TestJourneySteerCodexDenyAndAllowForTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.supervised()
	m, status := w.startSupervisedOn("codex", "clean up the build scripts in app", "clean up the build scripts [ask-permission:Bash:git push --force] [ask-permission:Bash:npm install left-pad] [ask-permission:Bash:npm install left-pad]")
	id := taskID(t, status.Text)

	push := w.awaitNew(m, requestRe(id, "git push --force"), "the request to force-push")
	if !strings.Contains(push.Text, "deny list") && !strings.Contains(push.Text, "remote") {
		t.Errorf("the force-push request does not warn that it is on the deny list: %q", push.Text)
	}
	if !strings.Contains(push.Text, "cannot be told a reason") {
		t.Errorf("the request does not say that Codex carries no reason: %q", push.Text)
	}
	if strings.Contains(push.Text, "bash -lc") {
		t.Errorf("the request shows Codex's shell wrapper instead of the command: %q", push.Text)
	}
	w.button(push, "Deny")
	m = w.send(ownerID, "no, because we never force-push")
	w.awaitNew(m, regexp.MustCompile(`^Denied\. The CLI is told no, but not your reason`), "the denial's reply")
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(git push --force\) — denied by `+ownerID), "the request message closed")

	npm := w.awaitNew(m, requestRe(id, "npm install left-pad"), "the request to run npm install")
	m = w.mark(ownerID)
	w.d.Click(ownerID, npm.Msg.ID, w.button(npm, "Allow for this task"))
	w.awaitNew(m, regexp.MustCompile(`^Allowed, and shell `+"`npm install[^`]*`"+` is allowed for the rest of task `+id), "the allow's reply")

	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	for _, want := range []string{"Did not run `git push --force`: the user declined.", "Ran `npm install left-pad`. Ran `npm install left-pad`."} {
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
}

// S4 on Codex: /stop while a request waits answers at once, closes the
// request and cancels the task.
func TestJourneySteerCodexStopWhileRequestPending(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.supervised()
	m, status := w.startSupervisedOn("codex", "tidy app", "tidy [ask-permission:Bash:make deploy]")
	id := taskID(t, status.Text)
	w.awaitNew(m, requestRe(id, "make deploy"), "the request")
	m = w.mark(ownerID)
	sent := time.Now()
	w.d.DM(ownerID, "/stop")
	w.stopWithin(m, sent, regexp.MustCompile(`Stopping task `+id))
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(make deploy\) — closed: the task's run ended`), "the request closed")
	w.await(m, regexp.MustCompile(`Task `+id+` was cancelled`), "the task cancelled")
}

// S5 on Codex: request_user_input's options become buttons; the click's
// answer goes into the same Codex process (the fake records it with its
// pid; a resumed run would record it without).
func TestJourneySteerCodexQuestionOptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.llm.Script(taskCreateOn("call-app", "add a config [ask-question:Which format?:JSON|YAML] [file:answers.txt]", "app", "codex"), testkit.Say("Started it."))
	m := w.send(ownerID, "add a config file to app")
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(codex\) — running`), "the task's status message")
	id := taskID(t, status.Text)
	q := w.awaitNew(m, regexp.MustCompile(`(?s)❓ Task `+id+` \(app\) asks:\nWhich format\?`), "the question")
	w.button(q, "JSON")
	m = w.mark(ownerID)
	w.d.Click(ownerID, q.Msg.ID, w.button(q, "YAML"))
	w.awaitNew(m, regexp.MustCompile(`Passing your answer "YAML" to task `+id), "the answer passed on")
	w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	got, err := w.gitShow("app", "fetch/"+id, "answers.txt")
	if err != nil || !regexp.MustCompile(`answer: YAML \(fakecli pid \d+\)`).MatchString(got) {
		t.Fatalf("answers.txt on fetch/%s = %q (%v); want the answer recorded by the asking process", id, got, err)
	}
	if _, resumed := w.find(m, regexp.MustCompile(`Resuming task `+id), nil); resumed {
		t.Error("the answer started a new run instead of going to the running CLI")
	}
}
