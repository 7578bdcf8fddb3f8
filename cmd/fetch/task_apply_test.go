package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// git runs git in dir with a fixed identity and fails the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// applyWorld is Fetch's repository of workspace app with task ab12cd34's
// branch, and the owner's clone of the base.
func applyWorld(t *testing.T) (repo, mine string, tk task.Task) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	git(t, src, "init", "-q")
	os.WriteFile(filepath.Join(src, "README"), []byte("base\n"), 0o644)
	git(t, src, "add", "README")
	git(t, src, "commit", "-qm", "base")
	mine = filepath.Join(root, "mine")
	git(t, root, "clone", "-q", src, mine)
	git(t, src, "checkout", "-qb", "fetch/ab12cd34")
	os.WriteFile(filepath.Join(src, "README"), []byte("the task's work\n"), 0o644)
	git(t, src, "commit", "-qam", "add a health endpoint")
	repo = filepath.Join(root, "data", "repos", "app.git")
	git(t, root, "clone", "-q", "--bare", src, repo)
	tk = task.Task{ID: "ab12cd34", Workspace: "app", Mode: task.Work, Branch: "fetch/ab12cd34", State: task.Succeeded,
		Commits: []workspace.Commit{{Hash: git(t, src, "rev-parse", "HEAD"), Subject: "add a health endpoint"}}}
	return repo, mine, tk
}

func TestApplyTask(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	clean := func(s string) string { return s }
	t.Run("applies", func(t *testing.T) {
		repo, mine, tk := applyWorld(t)
		var out bytes.Buffer
		if err := applyTask(t.Context(), tk, repo, mine, nil, &out, clean); err != nil {
			t.Fatal(err)
		}
		if b := git(t, mine, "symbolic-ref", "--short", "HEAD"); b != "fetch/ab12cd34" {
			t.Errorf("checked out %q", b)
		}
		if s := git(t, mine, "log", "-1", "--format=%s"); s != "add a health endpoint" {
			t.Errorf("subject %q", s)
		}
		if !strings.Contains(out.String(), "on branch fetch/ab12cd34") || !strings.Contains(out.String(), "You were on main") {
			t.Errorf("printed %q", out.String())
		}
		// Again: nothing to lose, it succeeds.
		if err := applyTask(t.Context(), tk, repo, mine, nil, &out, clean); err != nil {
			t.Errorf("applying again: %v", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		repo, mine, tk := applyWorld(t)
		notRepo := t.TempDir()
		noCommits := tk
		noCommits.Commits = nil
		ask := tk
		ask.Mode, ask.Branch = task.Ask, ""
		for name, c := range map[string]struct {
			tk   task.Task
			dir  string
			want string
			prep func()
		}{
			"no commits":      {tk: noCommits, dir: mine, want: "has no commits to apply"},
			"a question":      {tk: ask, dir: mine, want: "no work to apply"},
			"not a repo":      {tk: tk, dir: notRepo, want: "is not a git repository"},
			"missing dir":     {tk: tk, dir: filepath.Join(notRepo, "nope"), want: "is not a directory"},
			"kennel's":        {tk: tk, dir: filepath.Dir(repo), want: "which Fetch (or the kennel) writes"},
			"would overwrite": {tk: tk, dir: mine, want: "would be overwritten", prep: func() { os.WriteFile(filepath.Join(mine, "README"), []byte("mine\n"), 0o644) }},
		} {
			t.Run(name, func(t *testing.T) {
				if c.prep != nil {
					c.prep()
				}
				var out bytes.Buffer
				err := applyTask(t.Context(), c.tk, repo, c.dir, []string{filepath.Dir(filepath.Dir(repo))}, &out, clean)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v; want %q", err, c.want)
				}
				if b := git(t, mine, "branch", "--list", "fetch/*"); b != "" {
					t.Errorf("a refused apply made branch %q", b)
				}
				if b := git(t, mine, "symbolic-ref", "--short", "HEAD"); b != "main" {
					t.Errorf("a refused apply checked out %q", b)
				}
			})
		}
	})
}
