package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// gitTimeout bounds the measure of a run's changes after it ended.
const gitTimeout = gitrun.DefaultTimeout

// gitRepo runs git in a work tree through the runner (package gitrun: in
// the kennel, hardened, argv only).
type gitRepo struct {
	runner    Runner
	workspace string
	dir       string
	taskID    string
}

// snapshot is the work tree at one moment, as a git tree object.
type snapshot struct {
	tree string
}

// snapshot records the whole work tree (tracked files, and untracked ones
// that .gitignore does not exclude) as a tree object. It stages into a
// temporary index, never the user's, and leaves HEAD and refs alone. It
// is one exec (a batch of the shim's): on a remote engine each exec is a
// round trip, and on any engine one costs the engine more than git does.
func (g gitRepo) snapshot(ctx context.Context) (snapshot, error) {
	tree, _, err := g.snapshotSince(ctx, "")
	return snapshot{tree: tree}, err
}

// snapshotSince snapshots the work tree and, when since is a tree, lists
// what changed from it (git diff-tree's --name-status and --numstat lines)
// in the same batch.
func (g gitRepo) snapshotSince(ctx context.Context, since string) (tree string, diff [2][]string, err error) {
	index := "${gitdir}/fetch-snapshot-" + g.taskID + ".index"
	env := []string{"GIT_INDEX_FILE=" + index}
	steps := []gitrun.Step{
		{Dir: g.dir, Args: []string{"rev-parse", "--absolute-git-dir"}, Capture: "gitdir"},
		// A leftover of a snapshot whose clean-up failed goes first, so
		// that a read-tree that fails below starts from nothing.
		{Dir: g.dir, Argv: []string{"rm", "-f", "--", index}},
		// Start from HEAD, so that tracked files stay in the snapshot even
		// when a .gitignore pattern matches them; an unborn branch (no
		// HEAD, and then no read-tree) starts empty.
		{Dir: g.dir, Args: []string{"rev-parse", "--verify", "--quiet", "HEAD"}, AllowFail: true},
		{Dir: g.dir, Args: []string{"read-tree", "HEAD"}, Env: env, AllowFail: true},
		{Dir: g.dir, Args: []string{"add", "--all", "--", ":/"}, Env: env},
		{Dir: g.dir, Args: []string{"write-tree"}, Env: env, Capture: "tree"},
		// The index holds nothing the tree does not. A leftover (rm
		// failing) is harmless: the next snapshot removes it.
		{Dir: g.dir, Argv: []string{"rm", "-f", "--", index}, AllowFail: true},
	}
	if since != "" {
		steps = append(steps,
			gitrun.Step{Dir: g.dir, Args: []string{"diff-tree", "-r", "--no-renames", "--name-status", since, "${tree}"}},
			gitrun.Step{Dir: g.dir, Args: []string{"diff-tree", "-r", "--no-renames", "--numstat", since, "${tree}"}})
	}
	res, err := gitrun.New(g.runner).Batch(ctx, g.workspace, steps)
	if err != nil {
		return "", diff, err
	}
	// The steps above, by index.
	const (
		gitDir, head, readTree, writeTree, nameStatus, numStat = 0, 2, 3, 5, 7, 8
	)
	for i, r := range res {
		if r.Truncated {
			return "", diff, fmt.Errorf("git %s: output over the limit", strings.Join(steps[i].Args, " "))
		}
		switch {
		case i == readTree && res[head].Exit != 0: // no HEAD: nothing to read
		case i != readTree && steps[i].AllowFail:
		default:
			if err := r.Err(); err != nil {
				return "", diff, err
			}
		}
	}
	if len(res) != len(steps) {
		return "", diff, fmt.Errorf("git snapshot: %d of %d steps ran", len(res), len(steps))
	}
	if dir := res[gitDir].Lines(); len(dir) == 0 || dir[0] == "" {
		return "", diff, errors.New("git rev-parse printed no git dir")
	}
	out := res[writeTree].Lines()
	if len(out) == 0 || !gitrun.IsObjectID(out[0]) {
		return "", diff, fmt.Errorf("git write-tree printed %q", out)
	}
	if since != "" {
		diff = [2][]string{res[nameStatus].Lines(), res[numStat].Lines()}
	}
	return out[0], diff, nil
}

// changes snapshots the work tree again and returns what changed since
// before, with line counts.
func (g gitRepo) changes(ctx context.Context, before snapshot) ([]FileChange, error) {
	after, diff, err := g.snapshotSince(ctx, before.tree)
	if err != nil {
		return nil, err
	}
	if after == before.tree {
		return nil, nil
	}
	status, numstat := diff[0], diff[1]
	byPath := make(map[string]*FileChange)
	var files []FileChange
	for _, line := range status {
		code, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := FileChange{Path: unquoteGitPath(path), Change: ChangeModified}
		switch code {
		case "A":
			f.Change = ChangeAdded
		case "D":
			f.Change = ChangeDeleted
		}
		files = append(files, f)
	}
	for i := range files {
		byPath[files[i].Path] = &files[i]
	}
	for _, line := range numstat {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		f, ok := byPath[unquoteGitPath(parts[2])]
		if !ok {
			continue
		}
		if parts[0] == "-" {
			f.Binary = true
			continue
		}
		f.Added, _ = strconv.Atoi(parts[0])
		f.Removed, _ = strconv.Atoi(parts[1])
	}
	slices.SortFunc(files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// unquoteGitPath undoes git's C-style quoting of unusual paths
// ("a\tb" → a<TAB>b); with core.quotePath=false only control characters,
// '"' and '\' are quoted.
func unquoteGitPath(p string) string {
	if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
		if s, err := strconv.Unquote(p); err == nil {
			return s
		}
	}
	return p
}
