package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// OutFile is a file a task's CLI left for the owner in its worktree's out
// folder, or one that was not taken (Skipped says why); OutLimits bound
// what TakeOut takes.
type (
	OutFile   = gitrun.OutFile
	OutLimits = gitrun.OutLimits
)

// TakeOut takes the files in wt's folder dir (relative to the worktree:
// harness.OutDir) and empties the folder, in one exec in the kennel
// (gitrun.OutStep): only regular files, reached without following a
// symlink, within l. A kennel whose shim is older than this Fetch takes
// nothing (gitrun.ErrOldShim).
func (r *Registry) TakeOut(ctx context.Context, wt Worktree, dir string, l OutLimits) ([]OutFile, error) {
	p, err := r.Path(wt.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace: take out files: %w", err)
	}
	if r.gitrun == nil {
		return nil, fmt.Errorf("workspace: take out files: %w", ErrNoKennel)
	}
	rel, err := filepath.Rel(p, wt.Path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("workspace: take out files: worktree %s is not inside workspace %s", wt.Path, wt.Workspace)
	}
	res, err := r.gitrun.Batch(ctx, p, []gitrun.Step{gitrun.OutStep(p, filepath.ToSlash(rel)+"/"+dir, l)})
	if err != nil {
		return nil, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("workspace: take out files of %s: no result", wt.Branch)
	}
	files, err := gitrun.ReadOut(res[0], l)
	if err != nil {
		return files, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	return files, nil
}
