package journey

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// Steering the coding CLI from chat: Claude tasks of a conversation run
// two-way; the scripted claude asks for permissions, asks questions and
// proposes plans through its stdin, in the real kennel.

// button returns the custom id of the button labelled label on s's message.
func (w *world) button(s seen, label string) string {
	w.t.Helper()
	for _, row := range s.Msg.Components {
		for _, b := range row.Components {
			if b.Label == label {
				return b.CustomID
			}
		}
	}
	w.t.Fatalf("message %q has no %s button: %+v", s.Text, label, s.Msg.Components)
	return ""
}

// supervised sets the conversation's autonomy to supervised.
func (w *world) supervised() {
	w.t.Helper()
	w.ask(ownerID, "/autonomy supervised", regexp.MustCompile(`^Autonomy: supervised`))
}

// startApproved starts a task under supervised autonomy, where starting it
// needs the owner's approval and the CLI plans first: it approves both
// (the task, then its plan) and returns the mark before the request and
// the task's status message.
func (w *world) startApproved(request, goal string) (mark, seen) {
	w.t.Helper()
	w.llm.Script(taskCreate("call-app", goal, "app"), testkit.Say("Started it."))
	m := w.send(ownerID, request)
	ask, approve := w.approval(m, regexp.MustCompile(`(?s)approval.*task_create`), "Approve")
	w.d.Click(ownerID, ask.Msg.ID, approve)
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), "the task's status message")
	id := taskID(w.t, status.Text)
	plan := w.awaitNew(m, regexp.MustCompile(`(?s)📋 Task `+id+` \(app\) proposes a plan:`), "the plan (supervised: every task plans first)")
	approved := w.mark(ownerID)
	w.d.Click(ownerID, plan.Msg.ID, w.button(plan, "Approve"))
	w.awaitNew(approved, regexp.MustCompile(`Plan approved: task `+id+` carries it out now`), "the plan approved")
	return m, status
}

// requestRe matches the message of task id's request to run command.
func requestRe(id, command string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)🔐 Task ` + id + ` \(app\) asks to run:.*` + regexp.QuoteMeta(command) + `.*Request \d+`)
}

// S1: supervised, the CLI asks to force-push: the owner sees the exact
// command with buttons and denies it with a reason; the CLI gets the reason
// and finishes without pushing. It then asks twice for npm install: "Allow
// for this task" on the first lets the second through without asking.
func TestJourneySteerDenyWithReasonAndAllowForTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.supervised()
	m, status := w.startApproved("clean up the build scripts in app", "clean up the build scripts [ask-permission:Bash:git push --force] [ask-permission:Bash:npm install left-pad] [ask-permission:Bash:npm install left-pad]")
	id := taskID(t, status.Text)

	push := w.awaitNew(m, requestRe(id, "git push --force"), "the request to force-push")
	if !strings.Contains(push.Text, "deny list") && !strings.Contains(push.Text, "remote") {
		t.Errorf("the force-push request does not warn that it is on the deny list: %q", push.Text)
	}
	w.button(push, "Allow once")
	w.button(push, "Deny")
	m = w.send(ownerID, "no, because we never force-push")
	w.awaitNew(m, regexp.MustCompile(`^Denied; the CLI is told: we never force-push`), "the denial's reply")
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(git push --force\) — denied by `+ownerID+`: we never force-push`), "the request message closed")

	npm := w.awaitNew(m, requestRe(id, "npm install left-pad"), "the request to run npm install")
	m = w.mark(ownerID)
	w.d.Click(ownerID, npm.Msg.ID, w.button(npm, "Allow for this task"))
	w.awaitNew(m, regexp.MustCompile(`^Allowed, and shell `+"`npm install[^`]*`"+` is allowed for the rest of task `+id), "the allow's reply")

	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	for _, want := range []string{"Did not run `git push --force`: The user denied this: we never force-push", "Ran `npm install left-pad`. Ran `npm install left-pad`."} {
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

// findAll returns the new messages since m that match re.
func (w *world) findAll(m mark, re *regexp.Regexp) []seen {
	var out []seen
	for _, s := range w.since(m) {
		if s.New && !s.Edit && re.MatchString(s.Text) {
			out = append(out, s)
		}
	}
	return out
}

// S2: a request nobody answers is denied at FETCH_APPROVAL_TTL; the CLI is
// told and finishes.
func TestJourneySteerRequestExpires(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_APPROVAL_TTL"] = "3s"
	w.start()
	w.supervised()
	m, status := w.startApproved("tidy app", "tidy [ask-permission:Bash:make deploy]")
	id := taskID(t, status.Text)
	w.awaitNew(m, requestRe(id, "make deploy"), "the request")
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(make deploy\) — denied: nobody answered in time`), "the request expired")
	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "Did not run `make deploy`: The user did not answer within 3s") {
		t.Errorf("result %q does not say the CLI was told of the expiry", res.Text)
	}
}

// S3: Fetch is SIGKILLed while a request waits; after the restart the
// request is denied, the CLI told, and the owner told once.
func TestJourneySteerRequestAcrossRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.supervised()
	m, status := w.startApproved("tidy app", "tidy [ask-permission:Bash:make deploy]")
	id := taskID(t, status.Text)
	w.awaitNew(m, requestRe(id, "make deploy"), "the request")
	w.kill()
	m = w.mark(ownerID)
	w.start()
	told := regexp.MustCompile(`Fetch restarted while task ` + id + `'s request \d+ \(make deploy\) waited for you, so it was denied`)
	w.awaitNew(m, told, "word of the denial at restart")
	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "Did not run `make deploy`: Fetch restarted") {
		t.Errorf("result %q does not say the CLI was told of the restart", res.Text)
	}
	if n := len(w.findAll(m, told)); n != 1 {
		t.Errorf("the owner was told %d times of the denial at restart; want once", n)
	}
}

// S4: /stop while a request waits answers at once and closes the request.
func TestJourneySteerStopWhileRequestPending(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.supervised()
	m, status := w.startApproved("tidy app", "tidy [ask-permission:Bash:make deploy]")
	id := taskID(t, status.Text)
	w.awaitNew(m, requestRe(id, "make deploy"), "the request")
	m = w.mark(ownerID)
	sent := time.Now()
	w.d.DM(ownerID, "/stop")
	w.stopWithin(m, sent, regexp.MustCompile(`Stopping task `+id))
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(make deploy\) — closed: the task's run ended`), "the request closed")
	w.await(m, regexp.MustCompile(`Task `+id+` was cancelled`), "the task cancelled")
}

// S5: AskUserQuestion's options become buttons; the click's answer goes
// into the same CLI process (the fake records it with its pid; a resumed
// run would record it without).
func TestJourneySteerQuestionOptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	m, status := w.startTask(ownerID, "add a config file to app", "add a config [ask-question:Which format?:JSON|YAML] [file:answers.txt]", "app")
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

// S6: /plan: the CLI plans read-only; Revise takes the owner's words and
// brings a new plan; Approve carries it out in the same session, which
// ends with a diff.
func TestJourneySteerPlanReviseApprove(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.ask(ownerID, "/use app", regexp.MustCompile(`app`))
	m := w.send(ownerID, "/plan tidy up the notes [file:PLAN.md]")
	started := w.awaitNew(m, regexp.MustCompile(`^Task (\w+) plans first on app`), "the plan task")
	id := regexp.MustCompile(`^Task (\w+)`).FindStringSubmatch(started.Text)[1]
	plan := w.awaitNew(m, regexp.MustCompile(`(?s)📋 Task `+id+` \(app\) proposes a plan:.*Append one line to PLAN\.md`), "the plan")
	m = w.mark(ownerID)
	w.d.Click(ownerID, plan.Msg.ID, w.button(plan, "Revise"))
	w.awaitNew(m, regexp.MustCompile(`^What should change in the plan\?`), "the question what to change")
	m = w.send(ownerID, "Also update the README.")
	w.awaitNew(m, regexp.MustCompile(`Asking task `+id+`'s CLI for a new plan`), "the revision passed on")
	plan2 := w.awaitNew(m, regexp.MustCompile(`(?s)📋 Task `+id+` \(app\) proposes a plan:.*As you asked: Also update the README\.`), "the revised plan")
	m = w.mark(ownerID)
	w.d.Click(ownerID, plan2.Msg.ID, w.button(plan2, "Approve"))
	w.awaitNew(m, regexp.MustCompile(`Plan approved: task `+id+` carries it out now`), "the approval's reply")
	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "PLAN.md") {
		t.Errorf("result %q does not name PLAN.md", res.Text)
	}
	if got, err := w.gitShow("app", "fetch/"+id, "PLAN.md"); err != nil || got == "" {
		t.Fatalf("PLAN.md on fetch/%s = %q (%v)", id, got, err)
	}
}

// S7: the agent plans a big goal first (task_create with plan_first): the
// owner gets the plan with Approve · Revise · Cancel before anything
// changes, and Cancel ends the task with nothing on its branch.
func TestJourneySteerAgentPlansFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	args, _ := json.Marshal(map[string]any{"goal": "rewrite the notes [file:PLAN.md]", "workspace": "app", "plan_first": true})
	w.llm.Script(testkit.Use(testkit.Call{ID: "big", Name: "task_create", Arguments: string(args)}), testkit.Say("It plans first."))
	m := w.send(ownerID, "rewrite all the notes in app")
	plan := w.awaitNew(m, regexp.MustCompile(`(?s)📋 Task (\w+) \(app\) proposes a plan:.*PLAN\.md`), "the plan")
	id := regexp.MustCompile(`📋 Task (\w+)`).FindStringSubmatch(plan.Text)[1]
	w.button(plan, "Approve")
	w.button(plan, "Revise")
	m = w.mark(ownerID)
	w.d.Click(ownerID, plan.Msg.ID, w.button(plan, "Cancel"))
	w.awaitResult(m, regexp.MustCompile(`Task `+id+` was cancelled`), "the cancelled task's result")
	if got, err := w.gitShow("app", "fetch/"+id, "PLAN.md"); err == nil {
		t.Errorf("PLAN.md is on fetch/%s after the plan was cancelled: %q", id, got)
	}
}

// S8: a CLI that keeps asking for what was denied is stopped by the loop
// guard, with a message saying so. Under autonomous autonomy a push
// (talking to a remote) is on the deny list: each ask is denied at once, and the third stops
// the task.
func TestJourneySteerLoopGuardStopsARepeatingCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.ask(ownerID, "/autonomy autonomous", regexp.MustCompile(`^Autonomy: autonomous`))
	m, status := w.startTask(ownerID, "publish app", "publish [ask-permission-repeat:Bash:git push origin main:6]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`(?s)Task `+id+` failed on app`), "the stopped task's result")
	if !strings.Contains(res.Text, "the coding CLI asked 3 times for") || !strings.Contains(res.Text, "git push origin main") {
		t.Errorf("result %q does not say the loop guard stopped the CLI asking for git push origin main", res.Text)
	}
	if n := len(w.findAll(m, requestRe(id, "git push origin main"))); n != 0 {
		t.Errorf("the owner was asked %d times about a request the deny list answers", n)
	}
	if ps := w.cliProcesses(); len(ps) != 0 {
		t.Errorf("CLI processes left after the loop guard stopped the task: %q", ps)
	}
}
