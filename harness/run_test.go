package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/google/go-cmp/cmp"
)

// gitRun runs git in dir on the host, for setting up and inspecting test
// repositories (which may belong to the kennel's uid, hence safe.directory;
// and no optional locks, so that inspecting never rewrites the index).
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo makes a git repository with one commit, one uncommitted change
// and one untracked file, which no run may report as its own.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	fillRepo(t, dir)
	return dir
}

// fillRepo makes dir a repository like newRepo's.
func fillRepo(t testing.TB, dir string) {
	t.Helper()
	gitRun(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "README.md", "# demo\n")
	write(t, dir, "calc.py", "def add(a, b):\n    return a - b\n")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "initial")
	write(t, dir, "README.md", "# demo\nwork in progress\n")
	write(t, dir, "scratch.txt", "user's own untracked file\n")
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// collector keeps the events of a run.
type collector struct{ events []harness.Event }

func (c *collector) add(ev harness.Event) { c.events = append(c.events, ev) }

func (c *collector) kinds(k harness.Kind) []harness.Event {
	var out []harness.Event
	for _, ev := range c.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// recordedArgv returns the argv the fake CLI recorded on stderr.
func recordedArgv(t testing.TB, stderr string) []string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "fakecli: argv "); ok {
			var argv []string
			if err := json.Unmarshal([]byte(rest), &argv); err != nil {
				t.Fatal(err)
			}
			return argv
		}
	}
	t.Fatalf("no argv recorded in stderr:\n%s", stderr)
	return nil
}

func localSetup(t *testing.T) (localRunner, *harness.Registry) {
	t.Helper()
	return localRunner{bin: testkit.FakeCLIBin(t), home: t.TempDir()}, harness.NewRegistry()
}

func TestRunLocalHappyPath(t *testing.T) {
	runner, reg := localSetup(t)
	for _, name := range reg.Names() {
		t.Run(string(name), func(t *testing.T) {
			a, _ := reg.Get(name)
			dir := newRepo(t)
			staged := gitRun(t, dir, "diff", "--cached", "--name-only")
			task := harness.Task{ID: "t-" + string(name), Goal: "Write it down [file:notes/done.md]", Workspace: dir}
			var c collector
			o, err := harness.Run(t.Context(), runner, a, task, nil, c.add)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Success || o.ExitCode != 0 || o.Summary == "" || o.SessionID == "" {
				t.Fatalf("outcome %+v", o)
			}
			want := []harness.FileChange{{Path: "notes/done.md", Change: harness.ChangeAdded, Added: 1}}
			if diff := cmp.Diff(want, o.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			git := c.kinds(harness.KindFileChanged)
			if len(git) == 0 || !git[len(git)-1].Git || git[len(git)-1].Path != "notes/done.md" {
				t.Errorf("no git file_changed event: %+v", git)
			}
			if res := c.kinds(harness.KindResult); len(res) != 1 || !res[0].Success {
				t.Errorf("result events %+v", res)
			}
			if name != harness.Cursor && o.Usage.IsZero() {
				t.Errorf("no usage reported")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "notes/done.md")); !strings.Contains(string(b), "was here") {
				t.Errorf("file not edited: %q", b)
			}
			if got := gitRun(t, dir, "diff", "--cached", "--name-only"); got != staged {
				t.Errorf("the user's index changed: %q, was %q", got, staged)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".git", "fetch-snapshot-*")); len(left) > 0 {
				t.Errorf("snapshot index left behind: %v", left)
			}
		})
	}
}

func TestRunLocalArgvByteForByte(t *testing.T) {
	runner, reg := localSetup(t)
	goal := `--model=evil -- '; touch pwned #" $(touch pwned2) ` + "`touch pwned3`" + ` && echo $HOME | tee x > y < z; \n` + "\n" + `{a,b} ~ * ? ! é 😀`
	for _, name := range reg.Names() {
		t.Run(string(name), func(t *testing.T) {
			a, _ := reg.Get(name)
			dir := newRepo(t)
			task := harness.Task{ID: "t1", Goal: goal, Workspace: dir}
			inv, err := a.Invocation(task, nil)
			if err != nil {
				t.Fatal(err)
			}
			o, err := harness.Run(t.Context(), runner, a, task, nil, nil)
			if err != nil || !o.Success {
				t.Fatalf("outcome %+v, err %v", o, err)
			}
			if diff := cmp.Diff(inv.Argv, recordedArgv(t, o.StderrTail)); diff != "" {
				t.Fatalf("argv the CLI received (-built +received):\n%s", diff)
			}
			if len(o.Files) != 1 || o.Files[0].Path != "FETCH_DONE.md" {
				t.Fatalf("something else ran: files %+v", o.Files)
			}
		})
	}
}

func TestRunLocalFailure(t *testing.T) {
	runner, reg := localSetup(t)
	for _, name := range reg.Names() {
		t.Run(string(name), func(t *testing.T) {
			a, _ := reg.Get(name)
			task := harness.Task{ID: "t1", Goal: "Break [scenario:fail:3]", Workspace: newRepo(t)}
			o, err := harness.Run(t.Context(), runner, a, task, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if o.Success || o.ExitCode != 3 || o.Error == "" || len(o.Files) != 0 {
				t.Fatalf("outcome %+v", o)
			}
		})
	}
}

// Aider exits 0 after a failed model call; the text says it failed.
func TestRunLocalAiderFailsWithExitZero(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Aider)
	o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "[scenario:fail]", Workspace: newRepo(t)}, nil, nil)
	if err != nil || o.Success || o.ExitCode != 0 || !strings.Contains(o.Error, "fake failure") {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
}

func TestRunLocalQuestionThenResume(t *testing.T) {
	runner, reg := localSetup(t)
	for _, name := range reg.Names() {
		t.Run(string(name), func(t *testing.T) {
			a, _ := reg.Get(name)
			dir := newRepo(t)
			task := harness.Task{ID: "t-q", Goal: "Decide [scenario:question] [file:answer.md]", Workspace: dir}
			var c collector
			o, err := harness.Run(t.Context(), runner, a, task, nil, c.add)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Success || !strings.Contains(o.Question, "Should I append") || o.SessionID == "" || len(o.Files) != 0 {
				t.Fatalf("outcome %+v", o)
			}
			if len(c.kinds(harness.KindQuestion)) != 1 {
				t.Fatalf("question events %+v", c.kinds(harness.KindQuestion))
			}
			task.ResumeID, task.Answer = o.SessionID, "Append, please."
			o2, err := harness.Run(t.Context(), runner, a, task, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !o2.Success || o2.Question != "" || o2.SessionID != o.SessionID {
				t.Fatalf("resumed outcome %+v", o2)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "answer.md"))
			if string(b) != "answer: Append, please.\n" {
				t.Fatalf("answer.md = %q", b)
			}
		})
	}
}

func TestRunLocalResumeUnknownSession(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Claude)
	task := harness.Task{ID: "t1", Goal: "x", Workspace: newRepo(t), ResumeID: "no-such-session", Answer: "yes"}
	o, err := harness.Run(t.Context(), runner, a, task, nil, nil)
	if err != nil || o.Success || !strings.Contains(o.Error, "No conversation found") {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
}

func TestRunLocalTimeoutIgnoringSIGINT(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.OpenCode) // OpenCode really ignores SIGINT in run mode
	task := harness.Task{ID: "t1", Goal: "[scenario:ignore-int]", Workspace: newRepo(t), Timeout: 500 * time.Millisecond}
	start := time.Now()
	o, err := harness.Run(t.Context(), runner, a, task, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !o.TimedOut || !o.Stopped || o.Success || o.Error != "timed out after 500ms" {
		t.Fatalf("outcome %+v", o)
	}
	if took := time.Since(start); took < localGrace {
		t.Fatalf("stopped after %v, before the SIGINT grace period: SIGINT was not ignored", took)
	}
}

func TestRunLocalHugeOutput(t *testing.T) {
	runner, reg := localSetup(t)
	for _, name := range []harness.Name{harness.Claude, harness.Copilot, harness.Aider} {
		a, _ := reg.Get(name)
		n, bytes := 0, 0
		o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "[scenario:huge:8]", Workspace: newRepo(t)}, nil,
			func(ev harness.Event) { n++; bytes += len(ev.Text) })
		if err != nil || !o.Success {
			t.Fatalf("%s: outcome %+v, err %v", name, o, err)
		}
		if bytes < 8<<20 || len(o.Summary) > 256<<10+64 {
			t.Fatalf("%s: %d events with %d bytes of text; summary %d bytes", name, n, bytes, len(o.Summary))
		}
	}
}

func TestRunLocalSecretIsReportedAsIs(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Claude)
	var c collector
	creds := harness.Credentials{"ANTHROPIC_API_KEY": "sk-ant-test-value", "OPENROUTER_API_KEY": "never-passed"}
	o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "[scenario:secret]", Workspace: newRepo(t)}, creds, c.add)
	if err != nil || !o.Success {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
	var text strings.Builder
	for _, ev := range c.kinds(harness.KindText) {
		text.WriteString(ev.Text)
	}
	// harness passes output on unchanged; redaction is the chat layer's job.
	if !strings.Contains(text.String(), "sk-ant-test-value") || strings.Contains(text.String(), "never-passed") {
		t.Fatalf("text %q", text.String())
	}
}

// TestRunLocalGitMeasuresEverything edits the work tree behind the CLI's
// back while it runs, as shell commands do, and commits, as Aider does.
func TestRunLocalGitMeasuresEverything(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Codex)
	dir := newRepo(t)
	write(t, dir, "lib/old.txt", "one\ntwo\nthree\n")
	gitRun(t, dir, "add", "lib/old.txt")
	gitRun(t, dir, "commit", "-q", "-m", "old", "--", "lib/old.txt")
	odd := "odd\tname \"quoted\" é.txt"
	done := false
	onEvent := func(ev harness.Event) {
		if ev.Kind != harness.KindSession || done {
			return
		}
		done = true
		write(t, dir, "calc.py", "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
		if err := os.Remove(filepath.Join(dir, "lib/old.txt")); err != nil {
			t.Error(err)
		}
		write(t, dir, odd, "x\n")
		write(t, dir, "bin.dat", "\x00\x01\x02")
		gitRun(t, dir, "commit", "-q", "-am", "made by the CLI")
	}
	o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "go", Workspace: dir}, nil, onEvent)
	if err != nil || !o.Success {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
	want := []harness.FileChange{
		{Path: "FETCH_DONE.md", Change: harness.ChangeAdded, Added: 1},
		{Path: "bin.dat", Change: harness.ChangeAdded, Binary: true},
		{Path: "calc.py", Change: harness.ChangeModified, Added: 5, Removed: 1},
		{Path: "lib/old.txt", Change: harness.ChangeDeleted, Removed: 3},
		{Path: odd, Change: harness.ChangeAdded, Added: 1},
	}
	if diff := cmp.Diff(want, o.Files); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
}

func TestRunLocalWorkdirAndUnbornBranch(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Gemini)
	ws := t.TempDir()
	wt := filepath.Join(ws, "worktrees", "t1")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, wt, "init", "-q")
	o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "go", Workspace: ws, Workdir: wt}, nil, nil)
	if err != nil || !o.Success || len(o.Files) != 1 || o.Files[0].Path != "FETCH_DONE.md" {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
}

func TestRunLocalNotARepository(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Claude)
	_, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "go", Workspace: t.TempDir()}, nil, nil)
	var ge *gitrun.GitError
	if !errors.As(err, &ge) {
		t.Fatalf("err %v, want a GitError", err)
	}
}

func TestRunLocalCanceled(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Codex)
	dir := newRepo(t)
	ctx, cancel := context.WithCancel(t.Context())
	onEvent := func(ev harness.Event) {
		if ev.Kind == harness.KindCommand {
			cancel()
		}
	}
	o, err := harness.Run(ctx, runner, a, harness.Task{ID: "t1", Goal: "[scenario:ignore-int]", Workspace: dir}, nil, onEvent)
	if !errors.Is(err, context.Canceled) || !o.Stopped || o.Success {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
	if slices.ContainsFunc(o.Files, func(f harness.FileChange) bool { return f.Path == "README.md" }) {
		t.Fatal("a change from before the run was reported")
	}
}

// TestRunLocalMeasuresEveryTree: the snapshots around a run (one batch
// each) see a change on an unborn branch, in a tracked file that a
// .gitignore pattern matches, and despite a leftover snapshot index.
func TestRunLocalMeasuresEveryTree(t *testing.T) {
	runner, reg := localSetup(t)
	a, _ := reg.Get(harness.Claude)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		goal  string
		want  []harness.FileChange
	}{
		{"unborn", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q", "-b", "main")
			write(t, dir, "scratch.txt", "untracked\n")
		}, "Write it down [file:notes/done.md]", []harness.FileChange{{Path: "notes/done.md", Change: harness.ChangeAdded, Added: 1}}},
		{"ignored but tracked", func(t *testing.T, dir string) {
			fillRepo(t, dir)
			write(t, dir, "build/out.txt", "v1\n")
			gitRun(t, dir, "add", "-f", "build/out.txt")
			gitRun(t, dir, "commit", "-q", "-m", "tracked build output")
			write(t, dir, ".gitignore", "build/\n")
		}, "Change it [file:build/out.txt]", []harness.FileChange{{Path: "build/out.txt", Change: harness.ChangeModified, Added: 1}}},
		{"leftover index, unborn", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q", "-b", "main")
			// A snapshot index that lists an ignored file: with no HEAD to
			// read, the snapshot must not start from it.
			write(t, dir, ".gitignore", "*.env\n")
			write(t, dir, "local.env", "TOKEN=x\n")
			gitRun(t, dir, "add", "-f", "local.env")
			if err := os.Rename(filepath.Join(dir, ".git", "index"), filepath.Join(dir, ".git", "fetch-snapshot-t1.index")); err != nil {
				t.Fatal(err)
			}
		}, "Write it down [file:notes/done.md]", []harness.FileChange{{Path: "notes/done.md", Change: harness.ChangeAdded, Added: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			o, err := harness.Run(t.Context(), runner, a, harness.Task{ID: "t1", Goal: tc.goal, Workspace: dir}, nil, nil)
			if err != nil || !o.Success {
				t.Fatalf("outcome %+v, err %v", o, err)
			}
			if diff := cmp.Diff(tc.want, o.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".git", "fetch-snapshot-*")); len(left) > 0 {
				t.Errorf("snapshot index left behind: %v", left)
			}
		})
	}
}
