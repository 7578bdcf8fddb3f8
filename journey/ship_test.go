package journey

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// shipWorld is a world whose workspace "app" is a clone of the fake
// GitHub's acme/app, with Fetch given a token for it.
type shipWorld struct {
	*world
	gh   *testkit.GitHub
	repo testkit.GitHubRepo
}

const shipRepo = "acme/app"

// newShipWorld makes the world, the fake GitHub with acme/app (files on
// main), and the workspace app cloned from it, its origin on the fake.
func newShipWorld(t *testing.T, files map[string]string) *shipWorld {
	t.Helper()
	w := newWorld(t)
	gh := testkit.NewGitHub(t)
	repo := gh.AddRepo("acme", "app", files)
	cloneAsOwner(t, w, repo)
	w.env["FETCH_GITHUB_TOKEN"] = gh.Token
	w.env["FETCH_GITHUB_URL"] = gh.APIURL
	w.env["FETCH_PR_POLL"] = "1s"
	w.watch = append(w.watch, gh.Token)
	return &shipWorld{world: w, gh: gh, repo: repo}
}

// cloneAsOwner makes workspace app as a clone from GitHub leaves it
// (made by the world, not by Fetch), owned by the kennel's user.
func cloneAsOwner(t *testing.T, w *world, repo testkit.GitHubRepo) {
	t.Helper()
	dir := w.workspacePath("app")
	for _, args := range [][]string{
		{"clone", "--quiet", "--no-local", repo.Dir, dir},
		{"-C", dir, "remote", "set-url", "origin", repo.CloneURL},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if os.Geteuid() == 0 {
		uid, gid := kennelUser()
		filepath.WalkDir(w.wsRoot, func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		})
	}
}

// prRe is the message of a task's pull request.
func prRe(id string) *regexp.Regexp {
	return regexp.MustCompile(`🔀 Pull request #(\d+) opened for task ` + id + ` on app: (\S+)`)
}

// S1: a request becomes a task, the task a pull request on GitHub with the
// work on its branch, and its link comes to the chat as a message of its
// own with its buttons. When the pull request is merged on GitHub, Fetch
// says so and removes the task's worktree and branch. The token never
// reached the kennel, the data directory or Fetch's log.
func TestJourneyTaskBecomesPullRequest(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go] [tests]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	pr := w.awaitNew(m, prRe(id), "the pull request's link")
	if !strings.Contains(pr.Text, w.gh.URL) {
		t.Errorf("the link %q is not on the fake GitHub %s", pr.Text, w.gh.URL)
	}
	var labels []string
	for _, row := range pr.Msg.Components {
		for _, b := range row.Components {
			labels = append(labels, b.Label)
			if b.Label == "Open" && (b.URL == "" || !strings.Contains(pr.Text, b.URL)) {
				t.Errorf("the Open button links to %q, not to the pull request", b.URL)
			}
		}
	}
	// pr-required: a human merges on GitHub, so no Merge button.
	if strings.Join(labels, ",") != "Open,Close" {
		t.Errorf("the pull request's buttons are %q, want Open and Close", labels)
	}
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 || prs[0].Head != "fetch/"+id || prs[0].Base != "main" || prs[0].State != "open" {
		t.Fatalf("pull requests on GitHub: %+v; want one open, fetch/%s into main", prs, id)
	}
	if got, ok := w.gh.File(shipRepo, "fetch/"+id, "health.go"); !ok || !strings.Contains(got, "fake claude was here") {
		t.Fatalf("health.go on GitHub's fetch/%s = %q, %v", id, got, ok)
	}
	for _, want := range []string{"add a health endpoint", "Appended one line to health.go", "`health.go +1 -0`", "`go test ./...`: passed"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("the pull request's body lacks %q (goal, summary, files, tests): %q", want, prs[0].Body)
		}
	}

	// /status tells how the selected workspace ships.
	w.selectWorkspace("app")
	st := w.ask(ownerID, "/status", statusRe)
	if !strings.Contains(st.Text, "Shipping: pr-required → acme/app") {
		t.Errorf("/status does not show how app ships: %q", st.Text)
	}

	// Merged on GitHub: Fetch notices, says so, and cleans up.
	m2 := w.mark(ownerID)
	w.gh.MergePR(shipRepo, prs[0].Number)
	w.awaitNew(m2, regexp.MustCompile(`🎉 Pull request #\d+ of task `+id+` was merged`), "the merge notice")
	if _, err := os.Stat(filepath.Join(w.workspacePath("app"), ".fetch", "worktrees", id)); err == nil {
		t.Errorf("the worktree of task %s is still there after the merge", id)
	}
	if _, err := w.gitShow("app", "refs/heads/fetch/"+id, "health.go"); err == nil {
		t.Errorf("the branch fetch/%s is still in the workspace after the merge", id)
	}

	w.stop()
	w.noToken(w.gh.Token)
	// What the scripted CLI recorded of its environment: no GitHub
	// variable and none of Fetch's own.
	out, err := w.fetchCLI("task", "show", "--json", id)
	if err != nil {
		t.Fatalf("fetch task show: %v\n%s", err, out)
	}
	var shown struct {
		StderrTail string `json:"stderr_tail"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("fetch task show --json: %v\n%s", err, out)
	}
	envLine := regexp.MustCompile(`fakecli: env (\[.*\])`).FindStringSubmatch(shown.StderrTail)
	if envLine == nil {
		t.Fatalf("the scripted CLI's recorded environment is not in the task's stderr: %q", shown.StderrTail)
	}
	var names []string
	if err := json.Unmarshal([]byte(envLine[1]), &names); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		// FETCH_TASK_ID is the kennel's tag on the run's processes (by
		// which a stop finds them), not a setting of Fetch's.
		if strings.Contains(n, "GITHUB") || strings.HasPrefix(n, "FETCH_") && n != "FETCH_TASK_ID" {
			t.Errorf("the coding CLI's environment has %s", n)
		}
	}
}

// noToken checks that the token is nowhere Fetch writes or the kennel
// sees: the data directory (database, WAL, patches, mirrors), Fetch's
// output and log, the kennels' environment, and what the scripted CLI
// recorded of its environment.
func (w *shipWorld) noToken(token string) {
	w.t.Helper()
	filepath.WalkDir(w.data, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, w.wsRoot) {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), token) {
			w.t.Errorf("%s holds the GitHub token", p)
		}
		return nil
	})
	if w.fetch.log.saw(token) {
		w.t.Error("fetch's output (its log included) held the GitHub token")
	}
	for _, id := range w.kennels(context.Background()) {
		out, err := exec.Command("docker", "inspect", "--format", "{{json .Config.Env}}", id).CombinedOutput()
		if err != nil {
			w.t.Errorf("docker inspect %s: %v", id, err)
			continue
		}
		if strings.Contains(string(out), token) || strings.Contains(string(out), "GITHUB") {
			w.t.Errorf("the kennel %s has the GitHub token in its environment: %s", id, out)
		}
	}
}

// S2: a local workspace never pushes: the task succeeds, nothing reaches
// GitHub, and /status says why.
func TestJourneyLocalWorkspaceNeverPushes(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	w.ask(ownerID, "/ship app local", regexp.MustCompile(`app now ships: local`))
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	w.selectWorkspace("app")
	w.ask(ownerID, "/status", regexp.MustCompile(`Shipping: local`))
	if _, ok := w.find(m, regexp.MustCompile(`Pull request`), func(seen) bool { return true }); ok {
		t.Error("a pull request was announced for a local workspace")
	}
	if b := w.gh.Branches(shipRepo); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
	if n := len(w.gh.PRs(shipRepo)); n != 0 {
		t.Errorf("%d pull requests on GitHub for a local workspace", n)
	}
}

// S3: the base moved on GitHub and conflicts with the work: the task needs
// attention naming the file, nothing is pushed; "Resolve" runs the coding
// CLI again to rebase onto the latest base, and then the pull request
// opens with both changes.
func TestJourneyConflictIsResolvedIntoAPullRequest(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, map[string]string{"README.md": "# app\n"})
	// Upstream moves on after the clone, in the file the task edits.
	w.gh.Commit(shipRepo, "main", "README.md", "# app\nupstream line\n", "Upstream change")
	w.start()
	m, status := w.startTask(ownerID, "add a line to the README of app", "add a line [file:README.md]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`⚠️ Task `+id+` on app needs your attention`), "the task's result")
	if !strings.Contains(res.Text, "conflicts with the latest main in README.md") {
		t.Errorf("the result does not name the conflict: %q", res.Text)
	}
	if b := w.gh.Branches(shipRepo); len(b) != 1 {
		t.Errorf("branches on GitHub after the conflict: %v; want only main", b)
	}
	m2 := w.send(ownerID, "/pr resolve "+id)
	w.awaitNew(m2, regexp.MustCompile(`Bringing the latest base into task `+id), "the resolve's reply")
	w.awaitResult(m2, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the resolved task's result")
	w.awaitNew(m2, prRe(id), "the pull request's link")
	got, ok := w.gh.File(shipRepo, "fetch/"+id, "README.md")
	if !ok || !strings.Contains(got, "upstream line") || !strings.Contains(got, "fake claude was here") {
		t.Fatalf("README.md on GitHub's fetch/%s = %q; want the upstream line and the task's", id, got)
	}
}

// S4: work that holds a credential is not committed and nothing leaves
// the machine: the task needs attention naming the file, line and rule,
// and GitHub has no branch of it.
func TestJourneySecretBlocksThePush(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	m, status := w.startTask(ownerID, "configure the app", "configure [scenario:leak] [file:config.ini]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`⚠️ Task `+id+` on app needs your attention`), "the task's result")
	if !regexp.MustCompile(`config\.ini:1 \([a-z-]+\)`).MatchString(res.Text) {
		t.Errorf("the result does not name the secret's file, line and rule: %q", res.Text)
	}
	if strings.Contains(res.Text, "AKIA") {
		t.Errorf("the result shows the secret: %q", res.Text)
	}
	if b := w.gh.Branches(shipRepo); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
}

// selectWorkspace has the model select ws for the owner's conversation.
func (w *world) selectWorkspace(ws string) {
	w.t.Helper()
	args, _ := json.Marshal(map[string]string{"name": ws})
	w.llm.Script(testkit.Use(testkit.Call{ID: "call-select-" + ws, Name: "workspace_select", Arguments: string(args)}), testkit.Say("Selected "+ws+"."))
	w.ask(ownerID, "switch to the "+ws+" workspace", regexp.MustCompile(`^Selected `+regexp.QuoteMeta(ws)+`\.`))
}

// S5: a review on the pull request comes to the chat; "Address the review"
// runs the coding CLI again with it, and the branch on GitHub gets the new
// commit (the same pull request, no second link).
func TestJourneyReviewIsAddressed(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.awaitNew(m, prRe(id), "the pull request's link")
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 {
		t.Fatalf("pull requests: %+v", prs)
	}
	tip := w.gh.Tip(shipRepo, "fetch/"+id)

	m2 := w.mark(ownerID)
	w.gh.AddReviewComment(shipRepo, prs[0].Number, "octocat", "health.go", 1, "Please also document the endpoint.")
	rev := w.awaitNew(m2, regexp.MustCompile(`💬 Pull request #\d+ of task `+id+` on app got a review`), "the review")
	if !strings.Contains(rev.Text, "Please also document the endpoint.") {
		t.Errorf("the review message does not quote the comment: %q", rev.Text)
	}
	m3 := w.send(ownerID, "/pr review "+id)
	w.awaitNew(m3, regexp.MustCompile(`Sending the review of task `+id), "the reply")
	w.awaitResult(m3, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the follow-up's result")
	w.must("the branch on GitHub to move", func() bool { return w.gh.Tip(shipRepo, "fetch/"+id) != tip })
	if got, ok := w.gh.File(shipRepo, "fetch/"+id, "FETCH_DONE.md"); !ok || !strings.Contains(got, "turn 2") {
		t.Errorf("the follow-up's work is not on GitHub's fetch/%s: %q", id, got)
	}
	if n := len(w.gh.PRs(shipRepo)); n != 1 {
		t.Errorf("%d pull requests after the follow-up; want the same one", n)
	}
	if _, ok := w.find(m3, prRe(id), func(seen) bool { return true }); ok {
		t.Error("the pull request's link was announced again after the follow-up")
	}
}

// S6: in an autonomous workspace, with the owner's autonomy level at
// autonomous, Fetch merges its pull request: the work is on main on
// GitHub, and the worktree goes.
//
// Issue 28: only after Fetch's own review, shown the goal and the diff,
// approves it; the review is on the pull request and its cost is the
// task's.
func TestJourneyAutonomousWorkspaceMerges(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	w.autonomous()
	w.llm.ScriptFor(reviewTool, reviewAnswer("approve", "Adds the health endpoint the goal asks for.",
		reviewFinding{Severity: "minor", Text: "a test would help"}))
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	w.awaitNew(m, regexp.MustCompile(`🔀 Pull request #\d+ opened and merged for task `+id), "the merged pull request")
	if got, ok := w.gh.File(shipRepo, "main", "health.go"); !ok || !strings.Contains(got, "fake claude was here") {
		t.Errorf("health.go on GitHub's main = %q, %v", got, ok)
	}
	w.awaitNew(m, regexp.MustCompile(`🎉 Pull request #\d+ of task `+id+` was merged`), "the cleanup notice")

	reqs := reviewRequests(w.llm)
	if len(reqs) != 1 {
		t.Fatalf("Fetch asked its LLM for %d reviews; want 1", len(reqs))
	}
	asked := reqs[0].Raw
	for _, want := range []string{"add a health endpoint", "health.go", "+fake claude was here"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the review was not shown %q (the goal and the diff): %s", want, asked)
		}
	}
	prs := w.gh.PRs(shipRepo)
	if len(prs) != 1 || !prs[0].Merged {
		t.Fatalf("pull requests on GitHub: %+v; want one, merged", prs)
	}
	reviews := w.gh.Reviews(shipRepo, prs[0].Number)
	if len(reviews) != 1 || reviews[0].User != w.gh.Login || reviews[0].State != "COMMENTED" ||
		!strings.Contains(reviews[0].Body, "Fetch's review: approve") || !strings.Contains(reviews[0].Body, "Adds the health endpoint the goal asks for.") {
		t.Fatalf("reviews on the pull request: %+v; want Fetch's approving review", reviews)
	}
	total, cli := w.taskCosts(id)
	if !costNear(total-cli, reviewCost) {
		t.Errorf("task %s costs $%v, its CLI $%v: the review's $%v is not counted with the task", id, total, cli, reviewCost)
	}
}

// S7: a token that may not push: the task succeeds, its result says what
// to do, and nothing is half-done on GitHub. Once the token may push,
// "/pr ship" opens the pull request; asked again, it finds the same one.
// From the command line, `fetch task pr` says the same.
func TestJourneyShippingWithoutPermission(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.gh.SetReadOnly(w.gh.Token, true)
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "not pushed") || !strings.Contains(res.Text, "Contents: read and write") {
		t.Errorf("the result does not say the work was not pushed and what the token needs: %q", res.Text)
	}
	if b := w.gh.Branches(shipRepo); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
	out, err := w.fetchCLI("task", "pr", id)
	if err == nil || !strings.Contains(out, "may not push") {
		t.Errorf("fetch task pr with a read-only token: %v\n%s", err, out)
	}

	w.gh.SetReadOnly(w.gh.Token, false)
	m2 := w.send(ownerID, "/pr ship "+id)
	w.awaitNew(m2, prRe(id), "the pull request's link")
	out, err = w.fetchCLI("task", "pr", id)
	if err != nil || !regexp.MustCompile(`Task `+id+`: pull request #1 \(open\): http`).MatchString(out) {
		t.Errorf("fetch task pr again: %v\n%s", err, out)
	}
	if n := len(w.gh.PRs(shipRepo)); n != 1 {
		t.Errorf("%d pull requests after shipping twice; want one", n)
	}
}

// fetchCLI runs the fetch binary with args in the world's environment and
// returns what it printed.
func (w *world) fetchCLI(args ...string) (string, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fetchBinary(w.t), args...)
	cmd.Env = w.environ()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// S8: faults, each told in one message that says what to do, with nothing
// left half-done on GitHub: no token, a repository that does not exist,
// GitHub unreachable.
func TestJourneyShippingFaults(t *testing.T) {
	t.Parallel()
	t.Run("no token", func(t *testing.T) {
		w := newShipWorld(t, nil)
		delete(w.env, "FETCH_GITHUB_TOKEN")
		w.start()
		m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
		id := taskID(t, status.Text)
		w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
		w.ask(ownerID, "/pr ship "+id, regexp.MustCompile(`⚠️ Task `+id+` was not pushed: no GitHub token is configured; set FETCH_GITHUB_TOKEN`))
		if b := w.gh.Branches(shipRepo); len(b) != 1 {
			t.Errorf("branches on GitHub: %v; want only main", b)
		}
	})
	t.Run("no such repository, then GitHub down", func(t *testing.T) {
		w := newShipWorld(t, nil)
		dir := w.workspacePath("app")
		missing := strings.Replace(w.repo.CloneURL, "/acme/app.git", "/acme/missing.git", 1)
		if out, err := exec.Command("git", "-c", "safe.directory=*", "-C", dir, "remote", "set-url", "origin", missing).CombinedOutput(); err != nil {
			t.Fatalf("set origin: %v\n%s", err, out)
		}
		if os.Geteuid() == 0 {
			uid, gid := kennelUser()
			os.Lchown(filepath.Join(dir, ".git", "config"), uid, gid)
		}
		w.start()
		m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
		id := taskID(t, status.Text)
		res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
		if !strings.Contains(res.Text, "not pushed") || !strings.Contains(res.Text, "no such repository") {
			t.Errorf("the result does not say the repository does not exist: %q", res.Text)
		}
		w.gh.Close()
		w.ask(ownerID, "/pr ship "+id, regexp.MustCompile(`⚠️ Task `+id+` was not pushed: .*unreachable.*try again later`))
	})
}
