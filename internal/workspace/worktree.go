package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// worktreeDir is where task worktrees live inside their workspace.
const worktreeDir = ".fetch/worktrees"

// BranchPrefix starts the name of every task branch.
const BranchPrefix = "fetch/"

// Worktree is a task's own git worktree, on its own branch.
type Worktree struct {
	// Workspace is the workspace's name.
	Workspace string `json:"workspace"`
	Path      string `json:"path"`
	Branch    string `json:"branch"`
	// Base is the commit the branch started from, BaseBranch the branch
	// that commit was on (empty when HEAD was detached).
	Base       string `json:"base"`
	BaseBranch string `json:"base_branch,omitempty"`
}

// AddWorktree makes a worktree for task id on a new branch fetch/<id> from
// the workspace's current commit. The workspace must have at least one
// commit. id must be a valid name (ValidateName).
func (r *Registry) AddWorktree(ctx context.Context, name, id string) (Worktree, error) {
	p, err := r.Path(name)
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree: %w", err)
	}
	if err := ValidateName(id); err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree: task id: %w", err)
	}
	if !isRepo(p) {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, ErrNotGit)
	}
	base, err := r.git(ctx, p, p, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the workspace has no commit to branch from: %w", name, err)
	}
	wt := Worktree{Workspace: name, Path: filepath.Join(p, filepath.FromSlash(worktreeDir), id), Branch: BranchPrefix + id, Base: strings.TrimSpace(base)}
	if b, err := r.git(ctx, p, p, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		wt.BaseBranch = strings.TrimSpace(b)
	}
	// .fetch/ stays out of the workspace's own status; the exclude file is
	// written in the kennel (a .git planted as a symlink must not lead a
	// host write out of the workspace).
	if err := r.gitrun.Exclude(ctx, p, "/.fetch/"); err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
	}
	if _, err := r.git(ctx, p, p, "worktree", "add", "--quiet", "-b", wt.Branch, "--", wt.Path, wt.Base); err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
	}
	return wt, nil
}

// Commit records everything in the worktree (tracked changes and new files,
// .gitignore respected) as one commit on its branch, so that the work
// exists in the repository and not only in a directory. It reports whether
// there was anything to commit.
func (r *Registry) Commit(ctx context.Context, wt Worktree, message string) (bool, error) {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return false, fmt.Errorf("workspace: commit: %w", err)
	}
	if _, err := r.git(ctx, p, wt.Path, "add", "--all"); err != nil {
		return false, fmt.Errorf("workspace: commit %s: %w", wt.Branch, err)
	}
	if _, err := r.git(ctx, p, wt.Path, "diff", "--cached", "--quiet", "--no-ext-diff"); err == nil {
		return false, nil
	}
	args := append(slices.Clone(identity), "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message)
	if _, err := r.git(ctx, p, wt.Path, args...); err != nil {
		return false, fmt.Errorf("workspace: commit %s: %w", wt.Branch, err)
	}
	return true, nil
}

// Pending stages everything in the worktree (tracked changes and new
// files, .gitignore respected: what Commit would record) and returns the
// patch from the branch's base to it, which includes the commits made on
// the branch: the whole work, before Fetch commits it. The patch has no
// context lines (--unified=0) and no binary contents; truncated says it was
// cut at the output bound.
func (r *Registry) Pending(ctx context.Context, wt Worktree) (patch string, truncated bool, err error) {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return "", false, fmt.Errorf("workspace: pending: %w", err)
	}
	if _, err := r.git(ctx, p, wt.Path, "add", "--all"); err != nil {
		return "", false, fmt.Errorf("workspace: pending %s: %w", wt.Branch, err)
	}
	patch, truncated, err = r.gitBounded(ctx, p, wt.Path, "diff", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--unified=0", wt.Base, "--")
	if err != nil {
		return "", false, fmt.Errorf("workspace: pending %s: %w", wt.Branch, err)
	}
	return patch, truncated, nil
}

// Diff is what a task's branch changed since its base.
type Diff struct {
	Files []FileStat `json:"files,omitempty"`
	// Commits on the branch since its base, oldest first.
	Commits []Commit `json:"commits,omitempty"`
	// Patch is the whole diff as text (git diff --binary), cut at
	// maxGitOutput; Truncated says it was.
	Patch     string `json:"-"`
	Truncated bool   `json:"truncated,omitempty"`
}

// FileStat is one changed file with its line counts.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// Added and Removed total the line counts.
func (d Diff) Added() (n int) {
	for _, f := range d.Files {
		n += f.Added
	}
	return n
}

func (d Diff) Removed() (n int) {
	for _, f := range d.Files {
		n += f.Removed
	}
	return n
}

// Diff returns what the worktree's branch changed since its base: commits
// only (Commit first to include the work tree).
func (r *Registry) Diff(ctx context.Context, wt Worktree) (Diff, error) {
	var d Diff
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff: %w", err)
	}
	rng := wt.Base + "..HEAD"
	num, err := r.git(ctx, p, wt.Path, "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--")
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff %s: %w", wt.Branch, err)
	}
	for _, e := range strings.Split(strings.TrimSuffix(num, "\n"), "\x00") {
		parts := strings.SplitN(e, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		f := FileStat{Path: parts[2]}
		if parts[0] == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(parts[0])
			f.Removed, _ = strconv.Atoi(parts[1])
		}
		d.Files = append(d.Files, f)
	}
	d.Patch, d.Truncated, err = r.gitBounded(ctx, p, wt.Path, "diff", "--binary", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--")
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff %s: %w", wt.Branch, err)
	}
	log, err := r.git(ctx, p, wt.Path, "log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e", rng, "--")
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff %s: %w", wt.Branch, err)
	}
	for _, rec := range strings.Split(log, "\x1e") {
		parts := strings.Split(strings.TrimLeft(rec, "\n"), "\x00")
		if len(parts) != 4 {
			continue
		}
		c := Commit{Hash: parts[0], Subject: parts[1], Author: parts[2]}
		c.When, _ = parseGitTime(parts[3])
		d.Commits = append(d.Commits, c)
	}
	return d, nil
}

// BranchState says whether a task branch's work exists elsewhere.
type BranchState struct {
	// Merged: the branch's head is contained in its base branch.
	Merged bool
	// Pushed: a remote-tracking branch contains the branch's head.
	Pushed bool
	// Missing: the branch does not exist (any more).
	Missing bool
}

// Safe reports whether removing the worktree loses nothing.
func (s BranchState) Safe() bool { return s.Merged || s.Pushed || s.Missing }

// BranchState checks whether the worktree's branch was merged into its base
// branch or pushed to a remote.
func (r *Registry) BranchState(ctx context.Context, wt Worktree) (BranchState, error) {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return BranchState{}, fmt.Errorf("workspace: branch state: %w", err)
	}
	head, err := r.git(ctx, p, p, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch)
	if err != nil {
		var ge *gitrun.GitError
		if errors.As(err, &ge) {
			return BranchState{Missing: true}, nil
		}
		return BranchState{}, fmt.Errorf("workspace: branch state %s: %w", wt.Branch, err)
	}
	head = strings.TrimSpace(head)
	var st BranchState
	if wt.BaseBranch != "" && head != wt.Base {
		_, err := r.git(ctx, p, p, "merge-base", "--is-ancestor", head, "refs/heads/"+wt.BaseBranch)
		st.Merged = err == nil
	}
	if remote, err := r.git(ctx, p, p, "branch", "--remotes", "--contains", head); err == nil && strings.TrimSpace(remote) != "" {
		st.Pushed = true
	}
	return st, nil
}

// RemoveWorktree removes a task's worktree. Without discard it refuses
// (ErrUnsafe) unless the branch was merged or pushed; with discard the
// worktree and its branch are deleted, whatever they held. Removing a
// worktree that is already gone is success.
func (r *Registry) RemoveWorktree(ctx context.Context, wt Worktree, discard bool) error {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return fmt.Errorf("workspace: remove worktree: %w", err)
	}
	if !discard {
		st, err := r.BranchState(ctx, wt)
		if err != nil {
			return err
		}
		if !st.Safe() {
			return fmt.Errorf("workspace: remove worktree %s: branch %s is neither merged nor pushed: %w", wt.Path, wt.Branch, ErrUnsafe)
		}
	}
	if _, err := os.Stat(wt.Path); err == nil {
		if _, err := r.git(ctx, p, p, "worktree", "remove", "--force", "--", wt.Path); err != nil {
			return fmt.Errorf("workspace: remove worktree %s: %w", wt.Path, err)
		}
	}
	if _, err := r.git(ctx, p, p, "worktree", "prune"); err != nil {
		return fmt.Errorf("workspace: remove worktree %s: %w", wt.Path, err)
	}
	if discard {
		if _, err := r.git(ctx, p, p, "rev-parse", "--verify", "--quiet", "refs/heads/"+wt.Branch); err == nil {
			if _, err := r.git(ctx, p, p, "branch", "-D", "--", wt.Branch); err != nil {
				return fmt.Errorf("workspace: discard branch %s: %w", wt.Branch, err)
			}
		}
	}
	return nil
}
