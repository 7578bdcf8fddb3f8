package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel"
)

// gitTimeout bounds each git command of a snapshot.
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

// git runs one git command and returns its stdout lines.
func (g gitRepo) git(ctx context.Context, env []string, args ...string) ([]string, error) {
	out, err := gitrun.New(g.runner).Run(ctx, gitrun.Cmd{Workspace: g.workspace, Dir: g.dir, Args: args, Env: env, Timeout: gitTimeout})
	if err == nil && out.Truncated {
		err = fmt.Errorf("git %s: output over %d bytes", args[0], gitrun.DefaultMaxOutput)
	}
	return out.Lines(), err
}

// snapshot records the whole work tree (tracked files, and untracked ones
// that .gitignore does not exclude) as a tree object. It stages into a
// temporary index, never the user's, and leaves HEAD and refs alone.
func (g gitRepo) snapshot(ctx context.Context) (snapshot, error) {
	out, err := g.git(ctx, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return snapshot{}, err
	}
	if len(out) == 0 || out[0] == "" {
		return snapshot{}, errors.New("git rev-parse printed no git dir")
	}
	index := []string{"GIT_INDEX_FILE=" + out[0] + "/fetch-snapshot-" + g.taskID + ".index"}
	// Start from HEAD, so that tracked files stay in the snapshot even when a
	// .gitignore pattern matches them; an unborn branch starts empty.
	start := []string{"read-tree", "HEAD"}
	if _, err := g.git(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		var ge *gitrun.GitError
		if !errors.As(err, &ge) {
			return snapshot{}, err
		}
		start = []string{"read-tree", "--empty"}
	}
	if _, err := g.git(ctx, index, start...); err != nil {
		return snapshot{}, err
	}
	if _, err := g.git(ctx, index, "add", "--all", "--", ":/"); err != nil {
		return snapshot{}, err
	}
	tree, err := g.git(ctx, index, "write-tree")
	if err != nil {
		return snapshot{}, err
	}
	if len(tree) == 0 || len(tree[0]) < 40 {
		return snapshot{}, fmt.Errorf("git write-tree printed %q", tree)
	}
	// The index holds nothing the tree does not; drop it. A leftover (rm
	// failing) is harmless: the next snapshot of this task overwrites it.
	_, _ = g.runner.Exec(ctx, kennel.ExecSpec{Workspace: g.workspace, Dir: g.dir, Argv: []string{"rm", "-f", "--", strings.TrimPrefix(index[0], "GIT_INDEX_FILE=")}, Timeout: gitTimeout}, func(kennel.Stream, []byte) {})
	return snapshot{tree: tree[0]}, nil
}

// changes snapshots the work tree again and returns what changed since
// before, with line counts.
func (g gitRepo) changes(ctx context.Context, before snapshot) ([]FileChange, error) {
	after, err := g.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if after.tree == before.tree {
		return nil, nil
	}
	status, err := g.git(ctx, nil, "diff-tree", "-r", "--no-renames", "--name-status", before.tree, after.tree)
	if err != nil {
		return nil, err
	}
	numstat, err := g.git(ctx, nil, "diff-tree", "-r", "--no-renames", "--numstat", before.tree, after.tree)
	if err != nil {
		return nil, err
	}
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
