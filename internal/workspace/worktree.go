package workspace

import (
	"bytes"
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
// least one commit. id must be a valid name (ValidateName).
func (r *Registry) AddWorktree(ctx context.Context, name, id string) (Worktree, error) {
	plan, err := r.PlanWorktree(ctx, name, id)
	if err != nil {
		return Worktree{}, err
	}
	p, err := r.Path(name)
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree: %w", err)
	}
	res, err := r.gitrun.Batch(ctx, p, plan.Steps)
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
	}
	return plan.Made(res)
}

// WorktreePlan is a task's worktree before it is made: the steps that make
// it, to run in the kennel (Batch, or the task's own run as its
// kennel.ExecSpec.Prepare, so that making it costs no exec of its own),
// and the Worktree they make, without its Base until Made reads it.
type WorktreePlan struct {
	Worktree Worktree
	Steps    []gitrun.Step
}

// PlanWorktree plans the worktree AddWorktree makes; the same rules hold.
// The plan of a task is the same every time (a restarted Fetch makes it
// again to Read what its run printed).
func (r *Registry) PlanWorktree(ctx context.Context, name, id string) (WorktreePlan, error) {
	p, err := r.Path(name)
	if err != nil {
		return WorktreePlan{}, fmt.Errorf("workspace: add worktree: %w", err)
	}
	if err := ValidateName(id); err != nil {
		return WorktreePlan{}, fmt.Errorf("workspace: add worktree: task id: %w", err)
	}
	if r.gitrun == nil {
		return WorktreePlan{}, fmt.Errorf("workspace: add worktree: %w", ErrNoKennel)
	}
	if !r.isRepo(ctx, name, p) {
		return WorktreePlan{}, fmt.Errorf("workspace: add worktree in %s: %w", name, ErrNotGit)
	}
	wt := Worktree{Workspace: name, Path: filepath.Join(p, filepath.FromSlash(worktreeDir), id), Branch: BranchPrefix + id}
	// One step, the shim's worktree command, in the kennel: the base, the
	// branch it is on, .fetch/ kept out of the workspace's own status (the
	// exclude file is written in the kennel: a .git planted as a symlink
	// must not lead a host write out of the workspace), and the worktree.
	// It prints three lines: the commit to branch from (it fails before
	// them when there is none), the exclude file, and the branch HEAD is
	// on ("HEAD" when detached); and starts one git where git worktree
	// add would start four.
	step := gitrun.WorktreeStep(p, wt.Path, wt.Branch, "/.fetch/")
	step.Capture = baseCapture // the first line
	return WorktreePlan{Worktree: wt, Steps: []gitrun.Step{step}}, nil
}

// planSteps is how many steps a plan has.
const planSteps = 1

// baseCapture names the base a WorktreePlan's first step reads.
const baseCapture = "base"

// PlannedBase is, for a RecordPlan carried out by the run that makes the
// worktree (kennel.ExecSpec.Prepare and Record), the base the plan read.
const PlannedBase = "${" + baseCapture + "}"

// Read reads what the plan's steps printed (a shim.BatchResult as JSON:
// kennel.Prepared) into the Worktree they made, as Made does.
func (p WorktreePlan) Read(printed []byte) (Worktree, error) {
	res, err := gitrun.Results(printed, p.Steps)
	if err != nil {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", p.Worktree.Workspace, err)
	}
	return p.Made(res)
}

// Made reads the results of the plan's steps: the Worktree with its Base
// and BaseBranch, or why it could not be made.
func (p WorktreePlan) Made(res []gitrun.StepResult) (Worktree, error) {
	wt, name := p.Worktree, p.Worktree.Workspace
	if len(res) < planSteps {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the batch ended after %d steps", name, len(res))
	}
	lines := strings.Split(res[0].Stdout, "\n")
	if err := res[0].Err(); err != nil {
		switch {
		case res[0].OldShim():
			return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, gitrun.ErrOldShim)
		case gitrun.IsObjectID(strings.TrimSpace(lines[0])):
			// The base was read: making the worktree failed.
			return Worktree{}, fmt.Errorf("workspace: add worktree in %s: %w", name, err)
		}
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the workspace has no commit to branch from: %w", name, err)
	}
	if len(lines) < 3 || !gitrun.IsObjectID(strings.TrimSpace(lines[0])) {
		return Worktree{}, fmt.Errorf("workspace: add worktree in %s: the worktree command printed %.200q", name, res[0].Stdout)
	}
	wt.Base = strings.TrimSpace(lines[0])
	wt.BaseBranch, _ = strings.CutPrefix(strings.TrimSpace(lines[2]), "refs/heads/")
	if wt.BaseBranch == "HEAD" { // detached
		wt.BaseBranch = ""
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

// background marks housekeeping steps: their failure ends nothing, and
// they run at the same time as the reading steps they follow (they touch
// none of what those read), so that they cost no time of their own.
func background(steps []gitrun.Step) []gitrun.Step {
	out := make([]gitrun.Step, len(steps))
	for i, s := range steps {
		s.AllowFail, s.Capture, s.Captures, s.Parallel = true, "", nil, true
		out[i] = s
	}
	return out
}

// RecordOptions are what Record does besides committing and diffing.
type RecordOptions struct {
	// Also are housekeeping steps run afterwards in the same exec, like
	// AddWorktree's.
	Also []gitrun.Step
}

// Recorded is what Record found.
type Recorded struct {
	Diff Diff
	// Committed: there was something to commit.
	Committed bool
}

// commitStep commits everything staged in wt with message (exit 1 when
// there is nothing to commit). The message is literal: it holds what a
// user typed, which a capture must not change.
func commitStep(wt Worktree, message string) gitrun.Step {
	return gitrun.Step{Dir: wt.Path, Args: append(slices.Clone(identity), "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message), AllowFail: true, Literal: true}
}

// Record commits everything in the worktree (tracked changes and new files,
// .gitignore respected) to its branch and returns what the branch changed
// since its base, read in the kennel, in one exec. (With Fetch's own
// repository, a task's work is read there instead: PlanRecord.)
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
		commitStep(wt, message),
		// The numstat (NUL-terminated records), an empty record, then the
		// patch: one git for both.
		// What follows only reads: at the same time.
		{Dir: wt.Path, Args: []string{"diff", "--numstat", "-z", "--binary", "--patch", "--no-renames", "--no-ext-diff", "--no-textconv", rng, "--"}, Parallel: true},
		{Dir: wt.Path, Args: []string{"log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e", rng, "--"}, Parallel: true},
	}
	const fixed = 4
	steps = append(steps, background(o.Also)...)
	res, err := r.gitrun.Batch(ctx, p, steps)
	if err != nil {
		return Recorded{}, fmt.Errorf("workspace: record %s: %w", wt.Branch, err)
	}
	if err := committed(res, fixed, wt, 2, 3); err != nil {
		return Recorded{}, err
	}
	rec := Recorded{Committed: res[1].Exit == 0}
	rec.Diff = ParseDiff(res[2].Stdout, res[3].Stdout, res[2].Truncated)
	return rec, nil
}

// committed checks the results of a batch that starts with add and
// commitStep and has at least n steps, of which must pass those named by
// index in must (add always; commit may find nothing to commit).
func committed(res []gitrun.StepResult, n int, wt Worktree, must ...int) error {
	if len(res) < n {
		return fmt.Errorf("workspace: record %s: the batch ended after %d steps", wt.Branch, len(res))
	}
	for _, i := range append([]int{0, 1}, must...) {
		if i == 1 && res[i].Exit == 1 {
			continue // nothing to commit
		}
		if err := res[i].Err(); err != nil {
			return fmt.Errorf("workspace: record %s: %w", wt.Branch, err)
		}
	}
	return nil
}

// ParseDiff reads what `git diff --numstat -z --binary --patch` (diff,
// cut when truncated) and `git log --reverse
// --format=%H%x00%s%x00%an%x00%cI%x1e` (log) printed for a branch's range.
func ParseDiff(diff, log string, truncated bool) Diff {
	num, patch := splitNumstatPatch(diff)
	return Diff{Files: parseNumstat(num), Patch: patch, Truncated: truncated, Commits: parseLog(log)}
}

// RecordPlan commits what a task's run left in its worktree and bundles
// the branch, what it adds over its base, for Fetch's own repository,
// where the work is read (mirror.Stage). Its steps are the program a run
// carries out in its own exec after the CLI (harness.Task.Record), so
// that recording costs no exec of its own; Bundle runs them in one exec
// of their own.
type RecordPlan struct {
	Worktree Worktree
	Steps    []gitrun.Step
}

// recordSteps is how many steps of a plan must have run.
const recordSteps = 4

// PlanRecord plans the record of wt's work as one commit with message.
// base is the commit to bundle from: wt.Base, or PlannedBase when the same
// run makes the worktree. also are
// housekeeping steps run afterwards, whose failure ends nothing.
func (r *Registry) PlanRecord(wt Worktree, base, message string, also []gitrun.Step) RecordPlan {
	branch := "refs/heads/" + wt.Branch
	// To stdout; fails on an empty bundle (the branch adds nothing).
	bundle := gitrun.BundleStep(wt.Path, branch, base)
	bundle.AllowFail, bundle.Parallel = true, true
	steps := []gitrun.Step{
		{Dir: wt.Path, Args: []string{"add", "--all"}},
		commitStep(wt, message),
		bundle,
		// The branch's head, to tell an empty bundle from a failed one.
		{Dir: wt.Path, Args: []string{"rev-parse", "--verify", "--quiet", branch + "^{commit}"}, AllowFail: true, Parallel: true},
	}
	return RecordPlan{Worktree: wt, Steps: append(steps, background(also)...)}
}

// Bundled is what a RecordPlan's steps did.
type Bundled struct {
	// Committed: there was something to commit (Uncommit undoes it).
	Committed bool
	// Tip is the branch's head after the commit.
	Tip string
	// Bundle holds what the branch adds over the base; nil when it adds
	// nothing, or the bundle could not be made or was over what one exec's
	// output may hold (the caller then asks for it another way).
	Bundle []byte
}

// Read reads what the plan's steps printed (a shim.BatchResult as JSON:
// a run's Recorded line), as Made does. It is kennel output: the bundle
// is checked where it is taken in.
func (p RecordPlan) Read(printed []byte) (Bundled, error) {
	res, err := gitrun.Results(printed, p.Steps)
	if err != nil {
		return Bundled{}, fmt.Errorf("workspace: record %s: %w", p.Worktree.Branch, err)
	}
	return p.Made(res)
}

// Made reads the results of the plan's steps.
func (p RecordPlan) Made(res []gitrun.StepResult) (Bundled, error) {
	wt := p.Worktree
	if err := committed(res, recordSteps, wt); err != nil {
		return Bundled{}, err
	}
	tip := strings.TrimSpace(res[3].Stdout)
	if res[3].Exit != 0 || !gitrun.IsObjectID(tip) {
		return Bundled{}, fmt.Errorf("workspace: record %s: the branch is gone: %w", wt.Branch, res[3].Err())
	}
	b := Bundled{Committed: res[1].Exit == 0, Tip: tip}
	if res[2].Exit == 0 && !res[2].Truncated {
		if bundle, err := base64.StdEncoding.DecodeString(res[2].Stdout); err == nil && bundleTip(bundle, "refs/heads/"+wt.Branch) == tip {
			b.Bundle = bundle
		}
	}
	return b, nil
}

// Bundle runs the plan's steps in one exec (for a run that did not carry
// them out).
func (r *Registry) Bundle(ctx context.Context, p RecordPlan) (Bundled, error) {
	ws, err := r.Path(p.Worktree.Workspace)
	if err != nil {
		return Bundled{}, fmt.Errorf("workspace: record: %w", err)
	}
	if r.gitrun == nil {
		return Bundled{}, fmt.Errorf("workspace: record: %w", ErrNoKennel)
	}
	res, err := r.gitrun.Batch(ctx, ws, p.Steps)
	if err != nil {
		return Bundled{}, fmt.Errorf("workspace: record %s: %w", p.Worktree.Branch, err)
	}
	return p.Made(res)
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

// bundleTip reads what ref points at from a git bundle's header (its
// "<object id> <ref>" lines, after the signature and the prerequisites,
// up to an empty line); "" when the header does not name ref. Fetch's
// own repository checks it against the bundle again.
func bundleTip(bundle []byte, ref string) string {
	header, _, _ := bytes.Cut(bundle, []byte("\n\n"))
	for _, line := range strings.Split(string(header), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref && gitrun.IsObjectID(id) {
			return id
		}
	}
	return ""
}

// splitNumstatPatch splits what `git diff --numstat -z --patch` printed:
// the numstat's records, each ending with NUL, an empty record, then the
// patch. No record is empty (each holds a path), so the first NUL NUL
// ends the numstat.
func splitNumstatPatch(out string) (num, patch string) {
	i := strings.Index(out, "\x00\x00")
	if i < 0 {
		return out, ""
	}
	return out[:i+1], out[i+2:]
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
