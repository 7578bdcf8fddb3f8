package workspace

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// OutFile is a file a task's CLI left for the owner in its worktree's out
// folder, or one that was not taken (Skipped says why).
type OutFile = shim.OutFile

// OutLimits bound what TakeOut takes.
type OutLimits = shim.OutLimits

// TakeOut takes the files in wt's folder dir (relative to the worktree:
// harness.OutDir) and empties the folder, in one exec in the kennel
// (shim.CmdOutfiles): only regular files, reached without following a
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
	l.Total = min(l.Total, shim.MaxOutTotal)
	step := gitrun.Step{Argv: shim.OutfilesArgv(p, filepath.ToSlash(rel)+"/"+dir, l), Base64: true, AllowFail: true}
	res, err := r.gitrun.Batch(ctx, p, []gitrun.Step{step})
	if err != nil {
		return nil, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("workspace: take out files of %s: no result", wt.Branch)
	}
	if res[0].OldShim() {
		return nil, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, gitrun.ErrOldShim)
	}
	if err := res[0].Err(); err != nil {
		return nil, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	if res[0].Truncated {
		return nil, fmt.Errorf("workspace: take out files of %s: over what one exec's output holds", wt.Branch)
	}
	data, err := base64.StdEncoding.DecodeString(res[0].Stdout)
	if err != nil {
		return nil, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	files, err := shim.ReadOutfiles(bytes.NewReader(data), l)
	if err != nil {
		return files, fmt.Errorf("workspace: take out files of %s: %w", wt.Branch, err)
	}
	return files, nil
}
