package journey

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// Issue 28's review before any merge: in an autonomous workspace, with
// the owner's autonomy at autonomous, Fetch merges its pull request on
// its own only when the change is within the workspace's limits (files,
// lines, and no path that always needs the owner) and Fetch's own LLM,
// shown the goal and the diff, approves it; the review is posted on the
// pull request and its cost is the task's. Anything else waits for the
// owner's Merge, with why.

// reviewTool is the tool Fetch's review answers through.
const reviewTool = "submit_review"

// reviewCost is what a scripted review costs.
const reviewCost = 0.0042

// reviewFinding is one finding of a scripted review.
type reviewFinding struct {
	Severity string `json:"severity"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Text     string `json:"text"`
}

// reviewAnswer is the model's answer to Fetch's review: a submit_review
// call with verdict, summary and findings.
func reviewAnswer(verdict, summary string, findings ...reviewFinding) testkit.Step {
	if findings == nil {
		findings = []reviewFinding{}
	}
	args, _ := json.Marshal(map[string]any{"verdict": verdict, "summary": summary, "findings": findings})
	step := testkit.Use(testkit.Call{ID: "call-review", Name: reviewTool, Arguments: string(args)})
	step.Cost = reviewCost
	return step
}

// autonomous makes app autonomous and the owner's autonomy autonomous:
// Fetch may merge on its own.
func (w *shipWorld) autonomous() {
	w.t.Helper()
	w.ask(ownerID, "/ship app autonomous", regexp.MustCompile(`app now ships: autonomous`))
	w.ask(ownerID, "/autonomy autonomous", regexp.MustCompile(`(?i)autonom`))
}

// reviewRequests are the requests of Fetch's review the fake OpenRouter
// received.
func reviewRequests(llm *testkit.OpenRouter) []testkit.Request {
	var out []testkit.Request
	for _, r := range llm.Requests() {
		for _, t := range r.Tools() {
			if t == reviewTool {
				out = append(out, r)
			}
		}
	}
	return out
}

// heldRe is the message of a pull request that waits for the owner's
// Merge, with why.
func heldRe(id string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)🔀 Pull request #(\d+) opened for task ` + id + ` on app: \S+.*⏸️ Waits for your Merge: (.*)`)
}

// taskCosts reads a task's total cost and its coding CLI's.
func (w *shipWorld) taskCosts(id string) (total, cli float64) {
	w.t.Helper()
	out, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		w.t.Fatalf("fetch task show: %v\n%s", err, out)
	}
	var shown struct {
		CostUSD    float64 `json:"cost_usd"`
		CLICostUSD float64 `json:"cli_cost_usd"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		w.t.Fatalf("fetch task show --json: %v\n%s", err, out)
	}
	return shown.CostUSD, shown.CLICostUSD
}

// A task that touches .github/workflows/ in an autonomous workspace is
// not merged on its own, nor reviewed: its pull request waits for the
// owner's Merge and says which path holds it; the owner's Merge button
// merges it.
func TestJourneyWorkflowChangeWaitsForTheOwner(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	w.autonomous()
	m, status := w.startTask(ownerID, "add a CI workflow to app", "add a CI workflow [file:.github/workflows/ci.yml]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	held := w.awaitNew(m, heldRe(id), "the pull request that waits for the owner")
	if !strings.Contains(held.Text, ".github/workflows/ci.yml is a CI workflow") {
		t.Errorf("the message does not say the CI workflow holds it: %q", held.Text)
	}
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 || prs[0].State != "open" || prs[0].Merged {
		t.Fatalf("pull requests on GitHub: %+v; want one open, not merged", prs)
	}
	if _, ok := w.gh.File(shipRepo, "main", ".github/workflows/ci.yml"); ok {
		t.Fatal("the workflow is on main before the owner merged it")
	}
	if n := len(reviewRequests(w.llm)); n != 0 {
		t.Errorf("Fetch asked its LLM to review a change over the limits %d times; it needs the owner anyway", n)
	}

	m2 := w.mark(ownerID)
	w.d.Click(ownerID, held.Msg.ID, w.button(held, "Merge"))
	w.awaitNew(m2, regexp.MustCompile(`🎉 Pull request #\d+ of task `+id+` was merged`), "the merge notice")
	if got, ok := w.gh.File(shipRepo, "main", ".github/workflows/ci.yml"); !ok || !strings.Contains(got, "fake claude was here") {
		t.Errorf(".github/workflows/ci.yml on GitHub's main after the owner's Merge = %q, %v", got, ok)
	}
}

// A review that blocks leaves the pull request open, waiting for the
// owner, with its blocking findings said in the chat and posted on the
// pull request; a review that fails is no approval either, and says so.
// /automerge shows and changes the workspace's limits: a change over
// the files limit waits without a review.
func TestJourneyReviewThatBlocksOrFailsLeavesItWaiting(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	w.autonomous()

	w.llm.ScriptFor(reviewTool, reviewAnswer("block", "The endpoint is added but leaks the process environment.",
		reviewFinding{Severity: "blocking", File: "health.go", Line: 1, Text: "the handler prints every environment variable"},
		reviewFinding{Severity: "minor", Text: "no test for the endpoint"}))
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	held := w.awaitNew(m, heldRe(id), "the pull request that waits for the owner")
	if !strings.Contains(held.Text, "Fetch's review blocks it: health.go:1: the handler prints every environment variable") {
		t.Errorf("the message does not say the review's blocking finding: %q", held.Text)
	}
	w.button(held, "Merge")
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 || prs[0].State != "open" {
		t.Fatalf("pull requests on GitHub: %+v; want one open", prs)
	}
	reviews := w.gh.Reviews(shipRepo, prs[0].Number)
	if len(reviews) != 1 || reviews[0].State != "COMMENTED" || reviews[0].Commit != prs[0].HeadSHA ||
		!strings.Contains(reviews[0].Body, "Fetch's review: block") || !strings.Contains(reviews[0].Body, "the handler prints every environment variable") {
		t.Fatalf("reviews on the pull request: %+v; want Fetch's blocking review with its findings, on the head %s", reviews, prs[0].HeadSHA)
	}

	// A review that fails (the provider refuses it) is no approval.
	w.llm.ScriptFor(reviewTool, testkit.Fail(400))
	m2, status2 := w.startTask(ownerID, "add a readiness endpoint to app", "add a readiness endpoint [file:ready.go]", "app")
	id2 := taskID(t, status2.Text)
	w.awaitResult(m2, regexp.MustCompile(`✅ Task `+id2+` succeeded on app`), "the second task's result")
	held2 := w.awaitNew(m2, heldRe(id2), "the second pull request, waiting")
	if !strings.Contains(held2.Text, "Fetch's own review failed") {
		t.Errorf("the message does not say the review failed: %q", held2.Text)
	}
	for _, pr := range w.gh.PRs(shipRepo) {
		if pr.Merged {
			t.Errorf("pull request #%d was merged without an approving review", pr.Number)
		}
	}
	if _, ok := w.find(m, regexp.MustCompile(`💬 Pull request #\d+ of task `+id+` on app got a review`), func(seen) bool { return true }); ok {
		t.Error("Fetch's own review came back to the chat as a review from GitHub")
	}

	// /automerge: the limits shown, changed, and held to.
	w.selectWorkspace("app")
	shown := w.ask(ownerID, "/automerge", regexp.MustCompile(`Fetch merges app's pull requests on its own only when`))
	if !strings.Contains(shown.Text, "at most 20 files and 400 lines changed") {
		t.Errorf("/automerge does not show the default limits: %q", shown.Text)
	}
	w.ask(ownerID, "/automerge files 0", regexp.MustCompile(`Fetch now merges app's pull requests on its own only when its own review approves and the change touches at most 0 files`))
	w.ask(ownerID, "/automerge add db/", regexp.MustCompile(`your paths that always need you: db/`))
	w.ask(ownerID, "/automerge lines many", regexp.MustCompile(`Nothing changed: "many" is not a number of lines`))
	w.ask(ownerID, "/automerge add ../x", regexp.MustCompile(`Nothing changed: .*\.\. segment`))
	requests := len(reviewRequests(w.llm))
	m3, status3 := w.startTask(ownerID, "add a version endpoint to app", "add a version endpoint [file:version.go]", "app")
	id3 := taskID(t, status3.Text)
	w.awaitResult(m3, regexp.MustCompile(`✅ Task `+id3+` succeeded on app`), "the third task's result")
	held3 := w.awaitNew(m3, heldRe(id3), "the third pull request, waiting")
	if !strings.Contains(held3.Text, "it changes 1 file; the limit is 0") {
		t.Errorf("the message does not say the files limit holds it: %q", held3.Text)
	}
	if n := len(reviewRequests(w.llm)); n != requests {
		t.Errorf("Fetch asked for a review of a change over the workspace's limits")
	}
}

// costNear tells whether a cost is want, to a float's rounding.
func costNear(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
