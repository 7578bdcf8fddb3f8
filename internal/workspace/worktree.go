package workspace

import (
	"context"
	"encoding/base64"
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
// the workspace's current commit, in one exec. The workspace must have at
// least one commit. id must be a valid name (ValidateName). The steps also
// run in the same exec afterwards, whatever they return (housekeeping such
// as forgetting the logs of ended runs).
func (r *Registry) AddWorktree(ctx context.Context, name, id string, also ...gitrun.Step) (Worktree, error) {
	p, err := r.Path(name)
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree: %w", err)
	}
	if err := ValidateName(id); err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree: task id: %w", err)
	}
	if !r.isRepo(ctx, name, p) {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, ErrNotGit)
	}
	wt := Worktree{Workspace: name, Path: filepath.Join(p, filepath.FromSlash(worktreeDir), id), Branch: BranchPrefix + id}
	// One exec: the base, the branch it is on, .fetch/ kept out of the
	// workspace's own status (the exclude file is written in the kennel: a
	// .git planted as a symlink must not lead a host write out of the
	// workspace), and the worktree.
	res, err := r.gitrun.Batch(ctx, p, append([]gitrun.Step{
		{Args: []string{"rev-parse", "--verify", "--quiet", "HEAD^{commit}"}, Capture: "base"},
		{Args: []string{"symbolic-ref", "--quiet", "--short", "HEAD"}, AllowFail: true},
		{Args: []string{"rev-parse", "--git-path", "info/exclude"}, Capture: "exclude"},
		gitrun.ExcludeStep("", "${exclude}", "/.fetch/"),
		{Args: []string{"worktree", "add", "--quiet", "-b", wt.Branch, "--", wt.Path, "${base}"}},
	}, background(also)...))
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
	}
	if err := res[0].Err(); err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the workspace has no commit to branch from: %w", name, err)
	}
	for i, st := range res[:min(len(res), 5)] {
		if err := st.Err(); err != nil && i != 1 { // HEAD may be detached
			return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
		}
	}
	if len(res) < 5 {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the batch ended after %d steps", name, len(res))
	}
	wt.Base = strings.TrimSpace(res[0].Stdout)
	if res[1].Exit == 0 {
		wt.BaseBranch = strings.TrimSpace(res[1].Stdout)
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
	d.Files = parseNumstat(num)
	d.Patch, d.Truncated, err = r.gitBounded(ctx, p, wt.Path, "diff", "--binary", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--")
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff %s: %w", wt.Branch, err)
	}
	log, err := r.git(ctx, p, wt.Path, "log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e", rng, "--")
	if err != nil {
		return Diff{}, fmt.Errorf("workspace: diff %s: %w", wt.Branch, err)
	}
	d.Commits = parseLog(log)
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
	if !r.Local(ctx, wt.Workspace) {
		// Only its kennel sees it: remove it if it is there.
		if _, err := r.git(ctx, p, p, "worktree", "remove", "--force", "--", wt.Path); err != nil {
			r.log.Debug("workspace: remove worktree", "path", wt.Path, "err", err)
		}
	} else if _, err := os.Stat(wt.Path); err == nil {
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

// background marks housekeeping steps: their failure ends nothing.
func background(steps []gitrun.Step) []gitrun.Step {
	out := make([]gitrun.Step, len(steps))
	for i, s := range steps {
		s.AllowFail, s.Capture = true, ""
		out[i] = s
	}
	return out
}

// RecordOptions are what Record does besides committing and diffing.
type RecordOptions struct {
	// Bundle: also bundle the branch (what it adds over its base, or its
	// whole history with FullBundle) for Fetch's own repository, in the
	// same exec (Recorded.Bundle).
	Bundle, FullBundle bool
	// Also are housekeeping steps run afterwards in the same exec, like
	// AddWorktree's.
	Also []gitrun.Step
}

// Recorded is what Record found.
type Recorded struct {
	Diff Diff
	// Committed: there was something to commit.
	Committed bool
	// Tip is the branch's head afterwards.
	Tip string
	// Bundle is the branch's bundle (RecordOptions.Bundle); nil when the
	// branch adds nothing, or the bundle was over what one exec's output
	// may hold.
	Bundle []byte
}

// Record commits everything in the worktree (tracked changes and new files,
// .gitignore respected) to its branch and returns what the branch changed
// since its base, in one exec.
func (r *Registry) Record(ctx context.Context, wt Worktree, message string, o RecordOptions) (Recorded, error) {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return Recorded{}, fmt.Errorf("workspace: record: %w", err)
	}
	if r.gitrun == nil {
		return Recorded{}, fmt.Errorf("workspace: record: %w", ErrNoKennel)
	}
	rng := wt.Base + "..HEAD"
	steps := []gitrun.Step{
		{Dir: wt.Path, Args: []string{"add", "--all"}},
		// Exit 1 when there is nothing to commit.
		{Dir: wt.Path, Args: append(slices.Clone(identity), "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message), AllowFail: true},
		{Dir: wt.Path, Args: []string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--"}},
		{Dir: wt.Path, Args: []string{"diff", "--binary", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--"}},
		{Dir: wt.Path, Args: []string{"log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e", rng, "--"}},
		{Dir: wt.Path, Args: []string{"rev-parse", "--verify", "HEAD^{commit}"}},
	}
	const fixed = 6
	if o.Bundle {
		file := "/tmp/fetch-record-" + filepath.Base(wt.Path) + ".bundle"
		create := []string{"bundle", "create", "--quiet", file, "refs/heads/" + wt.Branch}
		if !o.FullBundle {
			create = append(create, "^"+wt.Base)
		}
		steps = append(steps,
			// Fails on an empty bundle (the branch adds nothing).
			gitrun.Step{Dir: wt.Path, Args: create, AllowFail: true},
			gitrun.Step{Argv: []string{"base64", "-w0", "--", file}, AllowFail: true},
			gitrun.Step{Argv: []string{"rm", "-f", "--", file}, AllowFail: true},
		)
	}
	steps = append(steps, background(o.Also)...)
	res, err := r.gitrun.Batch(ctx, p, steps)
	if err != nil {
		return Recorded{}, fmt.Errorf("workspace: record %s: %w", wt.Branch, err)
	}
	for i, st := range res[:min(len(res), fixed)] {
		if i == 1 && st.Exit == 1 {
			continue // nothing to commit
		}
		if err := st.Err(); err != nil {
			return Recorded{}, fmt.Errorf("workspace: record %s: %w", wt.Branch, err)
		}
	}
	if len(res) < fixed {
		return Recorded{}, fmt.Errorf("workspace: record %s: the batch ended after %d steps", wt.Branch, len(res))
	}
	rec := Recorded{Committed: res[1].Exit == 0, Tip: strings.TrimSpace(res[5].Stdout)}
	rec.Diff.Files = parseNumstat(res[2].Stdout)
	rec.Diff.Patch, rec.Diff.Truncated = res[3].Stdout, res[3].Truncated
	rec.Diff.Commits = parseLog(res[4].Stdout)
	if o.Bundle && len(res) >= fixed+2 && res[fixed].Exit == 0 && res[fixed+1].Exit == 0 && !res[fixed+1].Truncated {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(res[fixed+1].Stdout)); err == nil {
			rec.Bundle = b
		}
	}
	return rec, nil
}

// Uncommit undoes the commit Record made (the work stays in the worktree,
// staged): for work that must not be committed after all.
func (r *Registry) Uncommit(ctx context.Context, wt Worktree) error {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return fmt.Errorf("workspace: uncommit: %w", err)
	}
	if _, err := r.git(ctx, p, wt.Path, "reset", "--quiet", "--soft", "HEAD~1"); err != nil {
		return fmt.Errorf("workspace: uncommit %s: %w", wt.Branch, err)
	}
	return nil
}

func parseNumstat(num string) []FileStat {
	var files []FileStat
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
		files = append(files, f)
	}
	return files
}

func parseLog(log string) []Commit {
	var commits []Commit
	for _, rec := range strings.Split(log, "\x1e") {
		parts := strings.Split(strings.TrimLeft(rec, "\n"), "\x00")
		if len(parts) != 4 {
			continue
		}
		c := Commit{Hash: parts[0], Subject: parts[1], Author: parts[2]}
		c.When, _ = parseGitTime(parts[3])
		commits = append(commits, c)
	}
	return commits
}
