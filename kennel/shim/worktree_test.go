package shim

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv is the environment of the tests' git: no user or system
// configuration.
var gitEnv = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")

// git runs git in dir and returns its trimmed stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %s: %v: %s", args, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit on main.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(repo, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	for name, text := range map[string]string{"a.txt": "a\n", "src/b.go": "package b\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "first")
	return repo
}

// loggedGit is a git command that logs each of its invocations to the
// returned file before running git.
func loggedGit(t *testing.T) ([]string, string) {
	log := filepath.Join(t.TempDir(), "git.log")
	return []string{"sh", "-c", `echo "$*" >> "$0"; exec git "$@"`, log}, log
}

// gitRuns reads what loggedGit logged: one line per git started.
func gitRuns(t *testing.T, log string) []string {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// shimGit runs the worktree or bundle command (args, with "--" and git
// after them) as a batch runs it, and returns stdout, stderr and the exit
// code.
func shimGit(t *testing.T, dir string, gitArgv []string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append(append(args, "--"), gitArgv...)
	code := gitCommand(context.Background(), full, dir, gitEnv, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestWorktreeMakesTheBranchAndItsFilesWithOneGit(t *testing.T) {
	repo := newRepo(t)
	base := git(t, repo, "rev-parse", "HEAD")
	gitArgv, log := loggedGit(t)
	wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
	stdout, stderr, code := shimGit(t, "", gitArgv, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	if want := base + "\n" + exclude + "\nrefs/heads/main\n"; stdout != want {
		t.Errorf("printed %q, want %q", stdout, want)
	}
	if runs := gitRuns(t, log); len(runs) != 1 || !strings.HasPrefix(runs[0], "checkout ") {
		t.Errorf("git ran %q; want one checkout", runs)
	}
	if got := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); got != "fetch/t1" {
		t.Errorf("the worktree is on %q", got)
	}
	if got := git(t, repo, "rev-parse", "refs/heads/fetch/t1"); got != base {
		t.Errorf("the branch is at %s, want %s", got, base)
	}
	if got := git(t, wt, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("the new worktree is not clean: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "src", "b.go")); err != nil || string(b) != "package b\n" {
		t.Errorf("src/b.go: %q %v", b, err)
	}
	if got := git(t, repo, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("the workspace's status shows the worktree: %q (the exclude)", got)
	}
	list := git(t, repo, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+mustEval(t, wt)+"\nHEAD "+base+"\nbranch refs/heads/fetch/t1") || strings.Contains(list, "locked") {
		t.Errorf("git worktree list:\n%s", list)
	}
	// A second worktree: the exclude line is not added twice; a packed
	// branch is read too.
	git(t, repo, "pack-refs", "--all")
	wt2 := filepath.Join(repo, ".fetch", "worktrees", "t2")
	if _, stderr, code := shimGit(t, "", gitArgv, CmdWorktree, "--repo", repo, "--path", wt2, "--branch", "fetch/t2", "--exclude", "/.fetch/"); code != 0 {
		t.Fatalf("second worktree: exit %d: %s", code, stderr)
	}
	if runs := gitRuns(t, log); len(runs) != 2 {
		t.Errorf("git ran %q; want one more checkout (packed refs are read by the shim)", runs)
	}
	if b, _ := os.ReadFile(exclude); strings.Count(string(b), "/.fetch/\n") != 1 {
		t.Errorf("exclude file:\n%s", b)
	}
	git(t, repo, "worktree", "remove", "--force", wt)
	git(t, repo, "worktree", "prune")
	if list := git(t, repo, "worktree", "list"); strings.Contains(list, "worktrees/t1 ") || !strings.Contains(list, "worktrees/t2 ") {
		t.Errorf("after remove t1:\n%s", list)
	}
}

func TestWorktreeFromADetachedHead(t *testing.T) {
	repo := newRepo(t)
	base := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "checkout", "-q", "--detach")
	wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
	stdout, stderr, code := shimGit(t, "", []string{"git"}, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if lines := strings.Split(stdout, "\n"); lines[0] != base || lines[2] != "HEAD" {
		t.Errorf("printed %q", stdout)
	}
}

func TestWorktreeLeavesWhatItDoesNotReadToGit(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, repo string){
		"per-worktree config": func(t *testing.T, repo string) {
			git(t, repo, "config", "extensions.worktreeConfig", "true")
		},
		"a name taken": func(t *testing.T, repo string) {
			if err := os.MkdirAll(filepath.Join(repo, ".git", "worktrees", "t1"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			repo := newRepo(t)
			setup(t, repo)
			gitArgv, log := loggedGit(t)
			wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
			_, stderr, code := shimGit(t, "", gitArgv, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if runs := gitRuns(t, log); !strings.HasPrefix(runs[len(runs)-1], "worktree add") {
				t.Errorf("git ran %q; want git worktree add", runs)
			}
			if got := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); got != "fetch/t1" {
				t.Errorf("the worktree is on %q", got)
			}
		})
	}
}

func TestWorktreeFailures(t *testing.T) {
	t.Run("no commit", func(t *testing.T) {
		repo := filepath.Join(t.TempDir(), "ws")
		git(t, t.TempDir(), "init", "-q", repo)
		stdout, stderr, code := shimGit(t, "", []string{"git"}, CmdWorktree, "--repo", repo, "--path", filepath.Join(repo, "wt"), "--branch", "fetch/t1", "--exclude", "/.fetch/")
		if code == 0 || stdout != "" {
			t.Errorf("exit %d, printed %q: want a failure before the base line", code, stdout)
		}
		if !strings.Contains(stderr, "HEAD") {
			t.Errorf("stderr %q: want git's word on HEAD", stderr)
		}
	})
	t.Run("branch exists", func(t *testing.T) {
		repo := newRepo(t)
		git(t, repo, "branch", "fetch/t1")
		wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
		stdout, stderr, code := shimGit(t, "", []string{"git"}, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/")
		if code == 0 || !strings.Contains(stderr, "already exists") || strings.Count(stdout, "\n") != 3 {
			t.Errorf("exit %d, printed %q, stderr %q: want git's refusal after the base lines", code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(repo, ".git", "worktrees", "t1")); !os.IsNotExist(err) {
			t.Errorf("an administrative directory was left: %v", err)
		}
	})
	t.Run("path taken", func(t *testing.T) {
		repo := newRepo(t)
		wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "x"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := shimGit(t, "", []string{"git"}, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/")
		if code == 0 || !strings.Contains(stderr, "already exists") {
			t.Errorf("exit %d, stderr %q: want git's refusal", code, stderr)
		}
		if b, err := os.ReadFile(filepath.Join(wt, "x")); err != nil || string(b) != "mine" {
			t.Errorf("what was there: %q %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(repo, ".git", "worktrees", "t1")); !os.IsNotExist(err) {
			t.Errorf("an administrative directory was left: %v", err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, args := range [][]string{
			{CmdWorktree, "--repo", "/r", "--path", "/r/w", "--branch", "../x", "--exclude", "/.fetch/", "--", "git"},
			{CmdWorktree, "--repo", "/r", "--path", "/r/w", "--branch", "b", "--exclude", "/.fetch/"},
			{CmdBundle, "--ref", "HEAD", "--not", strings.Repeat("a", 40), "--", "git"},
			{CmdBundle, "--ref", "refs/heads/x", "--not", "HEAD~1", "--", "git"},
		} {
			var out, errOut bytes.Buffer
			if code := gitCommand(context.Background(), args, "", gitEnv, &out, &errOut); code != ExitUsage {
				t.Errorf("%q: exit %d (%s), want %d", args, code, errOut.String(), ExitUsage)
			}
		}
	})
}

func TestBundleHoldsTheBranchOverItsBaseWithOneGit(t *testing.T) {
	repo := newRepo(t)
	base := git(t, repo, "rev-parse", "HEAD")
	receiver := filepath.Join(t.TempDir(), "receiver")
	git(t, t.TempDir(), "clone", "-q", "--bare", repo, receiver)
	wt := filepath.Join(repo, ".fetch", "worktrees", "t1")
	if _, stderr, code := shimGit(t, "", []string{"git"}, CmdWorktree, "--repo", repo, "--path", wt, "--branch", "fetch/t1", "--exclude", "/.fetch/"); code != 0 {
		t.Fatalf("worktree: %s", stderr)
	}
	gitArgv, log := loggedGit(t)
	// Still at the base: no bundle.
	if stdout, stderr, code := shimGit(t, wt, gitArgv, CmdBundle, "--ref", "refs/heads/fetch/t1", "--not", base); code != ExitFailed || stdout != "" || !strings.Contains(stderr, "empty") {
		t.Errorf("empty: exit %d, %d bytes, stderr %q", code, len(stdout), stderr)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("a\nmore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, wt, "commit", "-q", "-am", "work")
	tip := git(t, wt, "rev-parse", "HEAD")
	stdout, stderr, code := shimGit(t, wt, gitArgv, CmdBundle, "--ref", "refs/heads/fetch/t1", "--not", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if runs := gitRuns(t, log); len(runs) != 1 || !strings.HasPrefix(runs[0], "pack-objects ") {
		t.Errorf("git ran %q; want one pack-objects", runs)
	}
	file := filepath.Join(t.TempDir(), "b.bundle")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, receiver, "bundle", "verify", "-q", file)
	git(t, receiver, "fetch", "-q", file, "refs/heads/fetch/t1:refs/heads/got")
	if got := git(t, receiver, "rev-parse", "refs/heads/got"); got != tip {
		t.Errorf("the receiver has %s, want %s", got, tip)
	}
	// The work itself came across.
	if got := git(t, receiver, "cat-file", "-p", tip+":a.txt"); got != "a\nmore" {
		t.Errorf("a.txt at the tip: %q", got)
	}
}
