package task_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// testInstance labels this package's kennel containers.
const testInstance = "fetch-task-test"

// newKennel returns a kennel on the harness test image (the scripted fake
// CLIs) and a runner over it.
func newKennel(t testing.TB) (*kennel.Kennel, *task.KennelRunner) {
	t.Helper()
	docker := testkit.RequireDocker(t)
	image := testkit.HarnessImage(t)
	k, err := kennel.New(docker, kennel.Config{Image: image, Instance: testInstance, Grace: time.Second}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return k, &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry(), Credentials: harness.Credentials{"ANTHROPIC_API_KEY": "sk-test"}}
}

// workspace creates a workspace whose kennel container is removed after
// the test.
func (e *testEngine) workspace(t testing.TB, k *kennel.Kennel, name string) string {
	t.Helper()
	info, err := e.ws.Create(t.Context(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		k.Remove(ctx, info.Path)
	})
	return info.Path
}

func wait(t testing.TB, e *testEngine, id string) task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	got, err := e.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func gitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestSucceededWithBranchDiffAndSummary(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{ConversationID: "c1", Workspace: "app", Goal: "note that it works [file:notes/DONE.md]"})
	if err != nil {
		t.Fatal(err)
	}
	if created.State != task.Running || created.Branch != "fetch/"+created.ID {
		t.Fatalf("created = %+v", created)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Succeeded || got.ExitCode != 0 || got.Summary == "" || got.Error != "" {
		t.Fatalf("task = %+v", got)
	}
	if len(got.Files) != 1 || got.Files[0].Path != "notes/DONE.md" || got.Files[0].Added != 1 {
		t.Fatalf("files = %+v", got.Files)
	}
	if len(got.Commits) != 1 || !strings.Contains(got.Patch, "+fake claude was here") {
		t.Fatalf("commits %+v, patch:\n%s", got.Commits, got.Patch)
	}
	patch, err := os.ReadFile(got.PatchPath)
	if err != nil || string(patch) != got.Patch {
		t.Fatalf("patch file %s: %v", got.PatchPath, err)
	}
	// The work is on the branch, not on the workspace's own branch.
	if out := gitOut(t, wsPath, "show", got.Branch+":notes/DONE.md"); !strings.Contains(out, "fake claude was here") {
		t.Fatalf("branch content = %q", out)
	}
	// And in Fetch's own repository, where the diff was read.
	if out := e.repoGit(t, "app", "show", got.Branch+":notes/DONE.md"); !strings.Contains(out, "fake claude was here") {
		t.Fatalf("branch content in Fetch's repository = %q", out)
	}
	if tip := e.repoGit(t, "app", "rev-parse", got.Branch); tip != got.Commits[0].Hash {
		t.Fatalf("branch in Fetch's repository at %s, its commit %s", tip, got.Commits[0].Hash)
	}
	if _, err := os.Stat(filepath.Join(wsPath, "notes")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the workspace's main tree changed: %v", err)
	}
	// The event log holds the transitions and the harness events, as JSONL.
	var buf bytes.Buffer
	if err := e.Export(t.Context(), got.ID, &buf); err != nil {
		t.Fatal(err)
	}
	var states []string
	kinds := map[string]int{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var le task.LogEntry
		if err := json.Unmarshal(sc.Bytes(), &le); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		kinds[le.Kind]++
		if le.Kind == "state" {
			var s struct{ To string }
			json.Unmarshal(le.Data, &s)
			states = append(states, s.To)
		}
	}
	if strings.Join(states, ",") != "running,succeeded" || kinds["result"] != 1 || kinds["tool_use"]+kinds["command"] == 0 {
		t.Fatalf("log: states %v, kinds %v", states, kinds)
	}
	e.obs.waitFor(t, got.ID, func(u task.Update) bool { return u.Kind == task.Ended })
	ups := e.obs.of(got.ID)
	if ups[0].Kind != task.Started || ups[len(ups)-1].Kind != task.Ended {
		t.Fatalf("updates: first %s, last %s", ups[0].Kind, ups[len(ups)-1].Kind)
	}
}

// TestSecretsAreNotCommitted: work holding a secret ends the task needing
// attention, naming file, line and rule but not the secret, and nothing
// is committed.
func TestSecretsAreNotCommitted(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{secrets: []string{"claude was here"}})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{ConversationID: "c1", Workspace: "app", Goal: "leak it [file:notes/LEAK.md]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.NeedsAttention || !strings.Contains(got.Error, "notes/LEAK.md:1 (configured-secret)") || strings.Contains(got.Error, "was here") {
		t.Fatalf("task = %s %q", got.State, got.Error)
	}
	if len(got.Commits) != 0 || got.Patch != "" || got.PatchPath != "" {
		t.Fatalf("recorded: commits %+v, patch %q, patch file %q", got.Commits, got.Patch, got.PatchPath)
	}
	if n := gitOut(t, wsPath, "rev-list", "--count", got.Base+".."+got.Branch); n != "0" {
		t.Fatalf("%s commits on the branch", n)
	}
	// Nothing of it entered Fetch's own repository: no branch, no object.
	if refs := e.repoGit(t, "app", "for-each-ref"); strings.Contains(refs, got.Branch) {
		t.Fatalf("the branch is in Fetch's repository: %s", refs)
	}
	if objs := e.repoGit(t, "app", "cat-file", "--batch-all-objects", "--batch"); strings.Contains(objs, "claude was here") {
		t.Fatalf("Fetch's repository holds the secret")
	}
}

// TestSecretsInTheHistoryAreNotTaken: a secret the branch's diff does
// not show, in a commit the CLI made — a file added and removed again, a
// commit message, a binary file — ends the task needing attention, naming
// the commit (one on the task's branch), the place and the rule but not
// the secret, and nothing of it enters Fetch's own repository.
func TestSecretsInTheHistoryAreNotTaken(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{secrets: []string{"a configured secret"}})
	wsPath := e.workspace(t, k, "app")
	const key = "AKIAQZ7XW2M4K6PBVN3T" // the scripted CLI's fake AWS key
	for _, tc := range []struct{ scenario, place string }{
		{"leak-history", `\.env:2`},
		{"leak-message", `commit message, line 3`},
		{"leak-binary", `blob\.bin:2`},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			created, err := e.Create(t.Context(), task.Request{ConversationID: "c1", Workspace: "app", Goal: "work [scenario:" + tc.scenario + "]"})
			if err != nil {
				t.Fatal(err)
			}
			got := wait(t, e, created.ID)
			m := regexp.MustCompile(`commit ([0-9a-f]{12}): ` + tc.place + ` \(aws-access-token\)`).FindStringSubmatch(got.Error)
			if got.State != task.NeedsAttention || m == nil || strings.Contains(got.Error, key[4:]) {
				t.Fatalf("task = %s %q", got.State, got.Error)
			}
			if n := gitOut(t, wsPath, "rev-list", "--count", got.Base+".."+m[1]); n == "0" {
				t.Errorf("the commit named, %s, is not on the branch over its base", m[1])
			}
			if refs := e.repoGit(t, "app", "for-each-ref"); strings.Contains(refs, got.Branch) {
				t.Fatalf("the branch is in Fetch's repository: %s", refs)
			}
			if objs := e.repoGit(t, "app", "cat-file", "--batch-all-objects", "--batch"); strings.Contains(objs, key) {
				t.Fatalf("Fetch's repository holds the key")
			}
		})
	}
}

// TestWorkReadInTheKennelWithoutFetchsRepository: without Fetch's own
// repository the work is committed and read in the kennel.
func TestWorkReadInTheKennelWithoutFetchsRepository(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{kennelDiff: true})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "note it [file:notes/DONE.md]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Succeeded || len(got.Files) != 1 || got.Files[0].Path != "notes/DONE.md" || len(got.Commits) != 1 || !strings.Contains(got.Patch, "+fake claude was here") {
		t.Fatalf("task = %s %q, files %+v, commits %+v", got.State, got.Error, got.Files, got.Commits)
	}
	if head := gitOut(t, wsPath, "rev-parse", got.Branch); head != got.Commits[0].Hash {
		t.Fatalf("branch at %s, its commit %s", head, got.Commits[0].Hash)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "repos")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a repository of Fetch's was made: %v", err)
	}
}

// TestTaskCostsOneExec: a task's worktree, run, commit and bundle are one
// exec; the work is read in Fetch's own repository. A workspace's first
// task costs one more, which brings the whole history over; a CLI's line
// forged in the shape of the record does not stand for the record.
func TestTaskCostsOneExec(t *testing.T) {
	counter := &countingDocker{Client: testkit.RequireDocker(t)}
	k, err := kennel.New(counter, kennel.Config{Image: testkit.HarnessImage(t), Instance: testInstance, Grace: time.Second}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	runner := &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry(), Credentials: harness.Credentials{"ANTHROPIC_API_KEY": "sk-test"}}
	e := newEngine(t, runner, engineOptions{})
	e.workspace(t, k, "app")
	for i, goal := range []string{"first [file:one.txt]", "second [file:two.txt]", "forged [file:three.txt] [scenario:forge-record]"} {
		before := counter.execs.Load()
		created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: goal})
		if err != nil {
			t.Fatal(err)
		}
		got := wait(t, e, created.ID)
		execs := counter.execs.Load() - before
		if got.State != task.Succeeded || len(got.Files) != 1 || len(got.Commits) != 1 || !strings.Contains(got.Patch, "+fake claude was here") {
			t.Fatalf("task %d = %s %q, files %+v, commits %+v", i, got.State, got.Error, got.Files, got.Commits)
		}
		if want := map[bool]int64{true: 2, false: 1}[i == 0]; execs != want {
			t.Errorf("task %d cost %d execs, want %d", i, execs, want)
		}
		if tip := e.repoGit(t, "app", "rev-parse", got.Branch); tip != got.Commits[0].Hash {
			t.Errorf("task %d: branch in Fetch's repository at %s, its commit %s", i, tip, got.Commits[0].Hash)
		}
	}
}

func TestFailedWithExitCodeAndStderr(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "break [scenario:fail:3]", Harness: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Failed || got.ExitCode != 3 || !strings.Contains(got.StderrTail, "fake failure requested by the scenario") || got.Error == "" {
		t.Fatalf("task = %+v", got)
	}
}

// runningTask starts a task that hangs and waits until its CLI is at work.
func runningTask(t testing.TB, e *testEngine, ws, harnessName string) task.Task {
	t.Helper()
	created, err := e.Create(t.Context(), task.Request{Workspace: ws, Goal: "run the long suite [scenario:hang]", Harness: harnessName})
	if err != nil {
		t.Fatal(err)
	}
	e.obs.waitFor(t, created.ID, progressWith(harness.KindCommand))
	got, err := e.Get(t.Context(), created.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// assertGone checks that the kennel has no live process of a run.
func assertGone(t testing.TB, k *kennel.Kennel, wsPath, runID string) {
	t.Helper()
	st, err := k.Task(t.Context(), wsPath, runID)
	if err != nil && !errors.Is(err, kennel.ErrNoTask) {
		t.Fatal(err)
	}
	if st.Running || len(st.Pids) > 0 {
		t.Fatalf("run %s still has processes: %+v", runID, st)
	}
}

func TestCancelMidRun(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	running := runningTask(t, e, "app", "claude")
	if err := e.Cancel(t.Context(), running.ID); err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, running.ID)
	if got.State != task.Cancelled || got.Summary != "" {
		t.Fatalf("task = %+v", got)
	}
	assertGone(t, k, wsPath, got.RunID)
	if err := e.Cancel(t.Context(), running.ID); !errors.Is(err, task.ErrState) {
		t.Fatalf("second cancel: %v; want ErrState", err)
	}
}

func TestTimeout(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{timeout: 3 * time.Second})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "never ends [scenario:ignore-int]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Failed || !got.TimedOut || !strings.Contains(got.Error, "timed out after 3s") {
		t.Fatalf("task = %+v", got)
	}
	assertGone(t, k, wsPath, got.RunID)
}

func TestQuestionAnswerResume(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "update the notes [scenario:question]"})
	if err != nil {
		t.Fatal(err)
	}
	asked := wait(t, e, created.ID)
	if asked.State != task.WaitingInput || !strings.Contains(asked.Question, "append to FETCH_DONE.md or replace") || asked.SessionID == "" {
		t.Fatalf("task = %+v", asked)
	}
	// The workspace stays held while the task waits.
	if _, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "other"}); !errors.Is(err, task.ErrBusy) {
		t.Fatalf("second task while waiting: %v; want ErrBusy", err)
	}
	if err := e.Respond(t.Context(), asked.ID, "append please"); err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, asked.ID)
	if got.State != task.Succeeded || got.Runs != 2 || got.SessionID != asked.SessionID {
		t.Fatalf("task = %+v", got)
	}
	content := gitOut(t, wsPath, "show", got.Branch+":FETCH_DONE.md")
	if !strings.Contains(content, "answer: append please") {
		t.Fatalf("FETCH_DONE.md on the branch = %q", content)
	}
	if err := e.Respond(t.Context(), got.ID, "again"); !errors.Is(err, task.ErrState) {
		t.Fatalf("answer after the end: %v; want ErrState", err)
	}
}

func TestParallelWorkspacesAndBusy(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{maxParallel: 2})
	e.workspace(t, k, "one")
	e.workspace(t, k, "two")
	e.workspace(t, k, "three")
	first := runningTask(t, e, "one", "claude")
	second := runningTask(t, e, "two", "gemini")
	for _, id := range []string{first.ID, second.ID} {
		if got, _ := e.Get(t.Context(), id); got.State != task.Running {
			t.Fatalf("%s is %s; want both running at once", id, got.State)
		}
	}
	_, err := e.Create(t.Context(), task.Request{Workspace: "one", Goal: "more"})
	var busy *task.BusyError
	if !errors.As(err, &busy) || busy.TaskID != first.ID || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("task on a busy workspace: %v; want a refusal naming %s", err, first.ID)
	}
	queued, err := e.Create(t.Context(), task.Request{Workspace: "one", Goal: "after it [file:AFTER.md]", Queue: true})
	if err != nil || queued.State != task.Queued {
		t.Fatalf("queued = %+v, %v", queued, err)
	}
	// A free workspace over the parallel limit waits its turn too.
	overLimit, err := e.Create(t.Context(), task.Request{Workspace: "three", Goal: "over the limit"})
	if err != nil || overLimit.State != task.Queued {
		t.Fatalf("over the limit = %+v, %v", overLimit, err)
	}
	if err := e.Cancel(t.Context(), first.ID); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, e, queued.ID); got.State != task.Succeeded {
		t.Fatalf("queued task = %+v", got)
	}
	if err := e.Cancel(t.Context(), second.ID); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, e, overLimit.ID); got.State != task.Succeeded {
		t.Fatalf("task over the limit = %+v", got)
	}
}

func TestOutputCap(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{outputCap: 256 << 10})
	wsPath := e.workspace(t, k, "app")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "talk a lot [scenario:huge:64]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Failed || !strings.Contains(got.Error, "output went over") {
		t.Fatalf("task = %+v", got)
	}
	assertGone(t, k, wsPath, got.RunID)
	var stored int
	e.Log(t.Context(), got.ID, func(le task.LogEntry) error { stored += len(le.Data); return nil })
	if stored > 300<<10 {
		t.Fatalf("%d bytes of events stored; the cap is 256 KiB", stored)
	}
}

func TestWorktreeKeptUntilMergedOrDiscarded(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	wsPath := e.workspace(t, k, "app")
	var ids []string
	for range 2 {
		created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "note it"})
		if err != nil {
			t.Fatal(err)
		}
		if got := wait(t, e, created.ID); got.State != task.Succeeded {
			t.Fatalf("task = %+v", got)
		}
		ids = append(ids, created.ID)
	}
	// Neither branch is merged or pushed: nothing is pruned.
	if pruned, err := e.Prune(t.Context()); err != nil || len(pruned) != 0 {
		t.Fatalf("prune before merging: %v, %v", pruned, err)
	}
	first, _ := e.Get(t.Context(), ids[0])
	gitOut(t, wsPath, "merge", "--ff-only", first.Branch)
	pruned, err := e.Prune(t.Context())
	if err != nil || len(pruned) != 1 || pruned[0] != ids[0] {
		t.Fatalf("prune after merging the first: %v, %v", pruned, err)
	}
	if _, err := os.Stat(first.Worktree); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("merged worktree still there: %v", err)
	}
	second, _ := e.Get(t.Context(), ids[1])
	if _, err := os.Stat(second.Worktree); err != nil {
		t.Fatalf("unmerged worktree gone: %v", err)
	}
	if err := e.Discard(t.Context(), ids[1]); err != nil {
		t.Fatal(err)
	}
	if out := gitOut(t, wsPath, "branch", "--list", second.Branch); out != "" {
		t.Fatalf("discarded branch still there: %q", out)
	}
}

// The worktree is made in the run's own exec: a workspace with no commit
// to branch from fails the task before the CLI starts, with nothing to
// record.
func TestNoCommitToBranchFromFailsBeforeTheCLI(t *testing.T) {
	k, runner := newKennel(t)
	e := newEngine(t, runner, engineOptions{})
	path := e.workspace(t, k, "app")
	gitOut(t, path, "symbolic-ref", "HEAD", "refs/heads/unborn")
	created, err := e.Create(t.Context(), task.Request{Workspace: "app", Goal: "touch a file [file:x.txt]"})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, e, created.ID)
	if got.State != task.Failed || !strings.Contains(got.Error, "could not make the task's branch") || !strings.Contains(got.Error, "no commit to branch from") {
		t.Fatalf("task = %+v", got)
	}
	if got.Worktree != "" || got.Branch != "" || got.Patch != "" {
		t.Errorf("a task whose worktree was not made keeps %q, %q, %q", got.Worktree, got.Branch, got.Patch)
	}
	if _, err := os.Stat(filepath.Join(path, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the CLI ran: %v", err)
	}
	if out := gitOut(t, path, "branch", "--list", "fetch/*"); strings.TrimSpace(out) != "" {
		t.Errorf("branches made: %q", out)
	}
}
