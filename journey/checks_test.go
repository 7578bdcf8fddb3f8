package journey

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// The workspace's checks run in its kennel on the task's branch before a
// pull request opens (package checks). The test repositories carry a
// test.sh the owner sets as the check (/checks set sh ./test.sh): the CI
// kennel image has sh but no go or make.

const (
	failingTest = "echo 'ok   app/config'\necho '--- FAIL: TestHealth: want 200, got 500'\nexit 1\n"
	passingTest = "echo 'ok   app'\n"
)

// withChecks selects app for the owner's conversation and sets its check.
func (w *shipWorld) withChecks(extra ...string) {
	w.t.Helper()
	w.ask(ownerID, "/use app", regexp.MustCompile(`app`))
	w.ask(ownerID, "/checks set sh ./test.sh", regexp.MustCompile(`(?s)^Changed\. app's checks.*\n- sh ./test.sh`))
	for _, cmd := range extra {
		w.ask(ownerID, cmd, regexp.MustCompile(`^Changed\.`))
	}
}

// labels are the buttons of s's message.
func labels(s seen) []string {
	var out []string
	for _, row := range s.Msg.Components {
		for _, b := range row.Components {
			out = append(out, b.Label)
		}
	}
	return out
}

// C1: in an autonomous workspace, with the owner's autonomy autonomous, a
// task whose tests fail gets a draft pull request whose body shows the
// failing command and the end of its output; it is not merged, and the
// chat says why, without a Merge button. With /checks failing hold, no
// pull request opens and nothing is pushed: the result says which check
// failed and offers Ship anyway, which opens it (not as a draft), still
// never merged on its own.
func TestJourneyFailingChecksNeverMerge(t *testing.T) {
	t.Parallel()
	t.Run("draft", func(t *testing.T) {
		w := newShipWorld(t, map[string]string{"test.sh": failingTest})
		w.start()
		w.ask(ownerID, "/ship app autonomous", regexp.MustCompile(`app now ships: autonomous`))
		w.ask(ownerID, "/autonomy autonomous", regexp.MustCompile(`(?i)autonom`))
		w.withChecks()
		m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
		id := taskID(t, status.Text)
		pr := w.awaitNew(m, regexp.MustCompile(`🔀 Pull request #\d+ opened as a draft for task `+id+` on app`), "the draft pull request")
		for _, want := range []string{"A check failed, so it is a draft and is not merged on its own", "❌ `sh ./test.sh`: failed (exit 1)", "--- FAIL: TestHealth: want 200, got 500"} {
			if !strings.Contains(pr.Text, want) {
				t.Errorf("the pull request's message lacks %q: %q", want, pr.Text)
			}
		}
		if slices.Contains(labels(pr), "Merge") {
			t.Errorf("a draft whose check failed has a Merge button: %q", labels(pr))
		}
		prs := w.gh.PRs(shipRepo)
		if len(prs) != 1 || !prs[0].Draft || prs[0].Merged || prs[0].State != "open" {
			t.Fatalf("pull requests on GitHub: %+v; want one open draft, not merged", prs)
		}
		for _, want := range []string{"**Checks Fetch ran in the kennel**", "- `sh ./test.sh` (owner): failed (exit 1)", "--- FAIL: TestHealth: want 200, got 500"} {
			if !strings.Contains(prs[0].Body, want) {
				t.Errorf("the pull request's body lacks %q:\n%s", want, prs[0].Body)
			}
		}
		if _, ok := w.gh.File(shipRepo, "main", "health.go"); ok {
			t.Error("the work reached main although its check failed")
		}
		// Followed a few polls: still open, never merged.
		polled := w.gh.Requests("GET /repos/{owner}/{repo}/pulls/{number}")
		w.must("the pull request to be polled", func() bool { return w.gh.Requests("GET /repos/{owner}/{repo}/pulls/{number}") >= polled+2 })
		if prs := w.gh.PRs(shipRepo); prs[0].Merged {
			t.Error("the draft was merged")
		}
		// Ship anyway marks it ready for review (GitHub's GraphQL); it is
		// still not merged on its own.
		m2 := w.mark(ownerID)
		w.d.Click(ownerID, pr.Msg.ID, w.button(pr, "Ship anyway"))
		again := w.awaitNew(m2, regexp.MustCompile(`🔀 Pull request #\d+ opened for task `+id+` on app`), "the pull request shipped anyway")
		if !strings.Contains(again.Text, "it was shipped anyway, and is not merged on its own") {
			t.Errorf("the message does not say it was shipped anyway: %q", again.Text)
		}
		prs = w.gh.PRs(shipRepo)
		if len(prs) != 1 || prs[0].Draft || prs[0].Merged || !strings.Contains(prs[0].Body, "The owner shipped it although a check failed") {
			t.Errorf("after Ship anyway: %+v; want the same pull request, ready, not merged, saying so", prs)
		}
	})
	t.Run("hold", func(t *testing.T) {
		w := newShipWorld(t, map[string]string{"test.sh": failingTest})
		w.start()
		w.ask(ownerID, "/ship app autonomous", regexp.MustCompile(`app now ships: autonomous`))
		w.ask(ownerID, "/autonomy autonomous", regexp.MustCompile(`(?i)autonom`))
		w.withChecks("/checks failing hold")
		m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
		id := taskID(t, status.Text)
		res := w.awaitResult(m, regexp.MustCompile(`⚠️ Task `+id+` on app needs your attention`), "the task's result")
		for _, want := range []string{"no pull request was opened", "❌ `sh ./test.sh`: failed (exit 1)", "--- FAIL: TestHealth"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("the result lacks %q: %q", want, res.Text)
			}
		}
		if b := w.gh.Branches(shipRepo); len(b) != 1 {
			t.Errorf("branches on GitHub: %v; want only main", b)
		}
		if n := len(w.gh.PRs(shipRepo)); n != 0 {
			t.Errorf("%d pull requests although the check failed and the workspace holds failing work", n)
		}
		m2 := w.mark(ownerID)
		w.d.Click(ownerID, res.Msg.ID, w.button(res, "Ship anyway"))
		pr := w.awaitNew(m2, regexp.MustCompile(`🔀 Pull request #\d+ opened for task `+id+` on app`), "the pull request shipped anyway")
		if !strings.Contains(pr.Text, "it was shipped anyway, and is not merged on its own") {
			t.Errorf("the message does not say it was shipped anyway: %q", pr.Text)
		}
		prs := w.gh.PRs(shipRepo)
		if len(prs) != 1 || prs[0].Draft || prs[0].Merged {
			t.Fatalf("pull requests: %+v; want one, ready, not merged", prs)
		}
		if !strings.Contains(prs[0].Body, "The owner shipped it although a check failed") || !strings.Contains(prs[0].Body, "failed (exit 1)") {
			t.Errorf("the body does not say the check failed and the owner shipped it anyway:\n%s", prs[0].Body)
		}
	})
}

// C2: a check that hangs is cut at FETCH_CHECK_TIMEOUT and reported as
// cut; its process does not outlive it in the kennel.
func TestJourneyHangingCheckIsCut(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, map[string]string{"test.sh": "echo 'waiting for a database'\nexec sleep 600\n"})
	w.env["FETCH_CHECK_TIMEOUT"] = "3s"
	w.start()
	w.withChecks()
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	pr := w.awaitNew(m, regexp.MustCompile(`🔀 Pull request #\d+ opened as a draft for task `+id), "the draft pull request")
	if !strings.Contains(pr.Text, "❌ `sh ./test.sh`: timed out: cut at the time limit of 3s") {
		t.Errorf("the message does not say the check was cut: %q", pr.Text)
	}
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 || !prs[0].Draft || !strings.Contains(prs[0].Body, "- `sh ./test.sh` (owner): timed out: cut at the time limit of 3s") ||
		!strings.Contains(prs[0].Body, "waiting for a database") {
		t.Fatalf("pull requests: %+v; want one draft whose body says the check was cut, with its output", prs)
	}
	if left := w.kennelProcesses("sleep 600"); len(left) > 0 {
		t.Errorf("the cut check is still running in the kennel: %q", left)
	}
}

// kennelProcesses lists the processes of the world's kennels whose command
// line holds s.
func (w *world) kennelProcesses(s string) []string {
	w.t.Helper()
	var out []string
	w.eachProcess(func(_, p []string) {
		if line := strings.Join(p, " "); strings.Contains(line, s) {
			out = append(out, line)
		}
	})
	return out
}

// taskCreateShip is the model's task_create asking how this task ships.
func taskCreateShip(id, goal, ws, how string) testkit.Step {
	args, _ := json.Marshal(map[string]string{"goal": goal, "workspace": ws, "ship": how})
	return testkit.Use(testkit.Call{ID: id, Name: "task_create", Arguments: string(args)})
}

// C3: "open it as a draft" gives that task a draft pull request, and the
// next task of the workspace a ready one; "just push it" pushes the
// branch without a pull request. In a local workspace the same asks are
// refused with the setting that would allow them, and no task starts.
func TestJourneyShipAsAskedForThisTaskOnly(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, map[string]string{"test.sh": passingTest})
	w.start()
	w.withChecks()

	w.llm.Script(taskCreateShip("call-draft", "add a health endpoint [file:health.go]", "app", "draft"), testkit.Say("Started it."))
	m := w.send(ownerID, "add a health endpoint to app, and open it as a draft")
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), "the task's status message")
	first := taskID(t, status.Text)
	pr := w.awaitNew(m, regexp.MustCompile(`🔀 Pull request #\d+ opened as a draft for task `+first), "the draft pull request")
	if !strings.Contains(pr.Text, "✅ `sh ./test.sh`: passed") || strings.Contains(pr.Text, "check failed") {
		t.Errorf("the draft's message: %q; want its passing check and no failure", pr.Text)
	}

	m2, status2 := w.startTask(ownerID, "add a version endpoint to app", "add a version endpoint [file:version.go]", "app")
	second := taskID(t, status2.Text)
	w.awaitNew(m2, prRe(second), "the second task's pull request, not a draft")

	w.llm.Script(taskCreateShip("call-push", "try a prototype [file:proto.go]", "app", "push"), testkit.Say("Started it."))
	m3 := w.send(ownerID, "just push it, it's a prototype")
	status3 := w.await(m3, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), "the third task's status message")
	third := taskID(t, status3.Text)
	res := w.awaitResult(m3, regexp.MustCompile(`✅ Task `+third+` succeeded on app`), "the pushed task's result")
	if !strings.Contains(res.Text, "Pushed branch fetch/"+third+" to GitHub; no pull request, as asked") {
		t.Errorf("the result does not say the branch was pushed without a pull request: %q", res.Text)
	}
	w.must("the pushed branch on GitHub", func() bool { return w.gh.Tip(shipRepo, "fetch/"+third) != "" })

	prs := w.gh.PRs(shipRepo)
	if len(prs) != 2 || prs[0].Head != "fetch/"+first || !prs[0].Draft || prs[1].Head != "fetch/"+second || prs[1].Draft {
		t.Fatalf("pull requests: %+v; want %s's a draft and %s's ready, none for %s", prs, first, second, third)
	}

	w.ask(ownerID, "/ship app local", regexp.MustCompile(`app now ships: local`))
	before := len(w.gh.PRs(shipRepo))
	for _, how := range []string{"push", "draft"} {
		w.llm.Script(taskCreateShip("call-local-"+how, "add a readme [file:README.md]", "app", how), testkit.Say("I tried."))
		got := w.ask(ownerID, "add a readme and "+how+" it", regexp.MustCompile(`^I tried\.`))
		if !strings.Contains(got.Text, "I did not start it: app ships locally") || !strings.Contains(got.Text, "/ship app pr-required would allow it") {
			t.Errorf("the refusal of %s in a local workspace does not name the setting: %q", how, got.Text)
		}
	}
	if n := len(w.gh.PRs(shipRepo)); n != before {
		t.Errorf("a pull request opened from a local workspace")
	}
	out, err := w.fetchCLI("task", "ls")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 4 {
		t.Errorf("fetch task ls after the refusals (want a header and the three tasks): %v\n%s", err, out)
	}
}
