package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/task"
)

// fetch task apply brings a task's work into the owner's own clone: the
// task's branch is fetched from Fetch's own repository of the workspace
// ($FETCH_DATA_DIR/repos/WS.git, which only Fetch writes) — never from the
// workspace's folder, which the kennel writes — and checked out in DIR on
// a branch of the same name, fetch/ID. Git runs in DIR as the owner's own
// git (DIR is their repository: their configuration and hooks are theirs).
// Fetch's repository may belong to another user (Fetch runs as root, or
// the owner is root and Fetch another user), which git refuses as "dubious
// ownership": that one path is named safe with -c on the command line of
// the git that reads it, never written into a configuration file. (A
// plain fetch from its path would not do: git clears command-line
// configuration for the upload-pack it starts on a local repository, so
// the branch is bundled from Fetch's repository into a private file and
// fetched from there.) The checkout is git's own:
// when it would overwrite uncommitted changes, git refuses it and DIR's
// branches and files stay as they were.

// applyTimeout bounds each git command of an apply.
const applyTimeout = 5 * time.Minute

// applyUsage is the reason for a refused apply, in the usage's words.
const applyUsage = "fetch task apply ID [DIR]: DIR (the current directory when left out) is your own clone of the workspace's repository"

// applyTask fetches task t's branch from repo (Fetch's repository of its
// workspace) into the git repository at dir and checks it out there.
func applyTask(ctx context.Context, t task.Task, repo, dir string, refuse []string, stdout io.Writer, clean func(string) string) error {
	if t.Mode != task.Work || t.Branch == "" {
		return fmt.Errorf("task %s answered a question (--ask): it has no work to apply", t.ID)
	}
	if len(t.Commits) == 0 {
		return fmt.Errorf("task %s has no commits to apply (it is %s); fetch task show %s says what it did", t.ID, t.State, t.ID)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("%w: %s is not a directory (%v); %s", errUsage, dir, err, applyUsage)
	}
	// No git runs in a folder the kennel writes or in Fetch's data: its
	// configuration could run a program here.
	for _, r := range refuse {
		if within(real, r) {
			return fmt.Errorf("%w: %s is inside %s, which Fetch (or the kennel) writes: run no git there; %s", errUsage, dir, r, applyUsage)
		}
	}
	top, err := ownGit(ctx, real, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("%w: %s is not a git repository with a working tree (%v); %s", errUsage, dir, err, applyUsage)
	}
	top = strings.TrimSpace(top)
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		return fmt.Errorf("task %s: Fetch's repository of workspace %s is not there (%s): %w", t.ID, t.Workspace, repo, err)
	}
	if err := fetchBranch(ctx, repo, t.Branch, top); err != nil {
		return fmt.Errorf("task %s: fetch its branch %s from %s: %w", t.ID, t.Branch, repo, err)
	}
	tip, err := ownGit(ctx, top, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}")
	if err != nil {
		return fmt.Errorf("task %s: read the fetched branch: %w", t.ID, err)
	}
	tip = strings.TrimSpace(tip)
	ref := "refs/heads/" + t.Branch
	if old, err := ownGit(ctx, top, "rev-parse", "--verify", "--quiet", ref); err == nil {
		// Applied before: the branch moves on only when it loses nothing.
		old = strings.TrimSpace(old)
		if _, err := ownGit(ctx, top, "merge-base", "--is-ancestor", old, tip); err != nil {
			return fmt.Errorf("branch %s in %s has commits the task's branch does not (%.12s is not in %.12s); rename or delete it, then apply again: nothing was changed", t.Branch, top, old, tip)
		}
	}
	prev, _ := ownGit(ctx, top, "symbolic-ref", "--quiet", "--short", "HEAD")
	prev = strings.TrimSpace(prev)
	// checkout -B is transactional: the branch is made or moved only
	// when the checkout succeeds.
	if _, err := ownGit(ctx, top, "checkout", "--quiet", "-B", t.Branch, tip); err != nil {
		return fmt.Errorf("task %s: check out %s in %s: %w (nothing was changed: commit or stash your changes, then apply again)", t.ID, t.Branch, top, err)
	}
	subject, _ := ownGit(ctx, top, "log", "-1", "--format=%s", tip)
	fmt.Fprintf(stdout, "Task %s's work is on branch %s in %s, checked out: %.12s %s\n", t.ID, t.Branch, top, tip, clean(strings.TrimSpace(subject)))
	if prev != "" && prev != t.Branch {
		fmt.Fprintf(stdout, "You were on %s: git switch %s goes back; git merge %s takes the work into it.\n", clean(prev), clean(prev), t.Branch)
	}
	return nil
}

// fetchBranch fetches refs/heads/branch of Fetch's repository repo into
// the owner's repository top, as its FETCH_HEAD.
func fetchBranch(ctx context.Context, repo, branch, top string) error {
	tmp, err := os.MkdirTemp("", "fetch-apply-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bundle := filepath.Join(tmp, "work.bundle")
	// Git on Fetch's repository runs none of its hooks.
	if _, err := ownGit(ctx, repo, "-c", "safe.directory="+repo, "-c", "core.hooksPath=/dev/null", "bundle", "create", "--quiet", bundle, "refs/heads/"+branch); err != nil {
		return err
	}
	_, err = ownGit(ctx, top, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--", bundle, "refs/heads/"+branch)
	return err
}

// within tells whether path is root or inside it, both without symlinks.
func within(path, root string) bool {
	if root == "" {
		return false
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ownGit runs the owner's git in dir, argv only, and returns its stdout; a
// failure carries git's own words.
func ownGit(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &limited{w: &errOut, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		op := args[0]
		if op == "-c" && len(args) > 2 {
			op = args[2]
		}
		msg := strings.TrimSpace(errOut.String())
		var exit *exec.ExitError
		if msg == "" || !errors.As(err, &exit) {
			return out.String(), fmt.Errorf("git %s: %w", op, err)
		}
		return out.String(), fmt.Errorf("git %s: %s", op, msg)
	}
	return out.String(), nil
}

// limited keeps the first n bytes written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
