package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Rebase replays the commits of the mirror's branch since its merge base
// with onto (a full ref or commit of the mirror, e.g.
// refs/remotes/origin/main) on top of onto, without a working tree, and
// moves refs/heads/BRANCH to the result, which it returns. A branch that
// holds onto already comes back as it is. A conflict is a *ConflictError
// and a merge commit ErrNotLinear; either way the branch is untouched.
// See the package doc for what the new commits keep.
func (m *Mirror) Rebase(ctx context.Context, ws, branch, onto string) (string, error) {
	op := "mirror: rebase " + branch
	if err := errors.Join(checkName(ws), checkBranch(branch), checkRev(onto)); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	sha, err := m.rebaseLocked(ctx, ws, branch, onto)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return sha, nil
}

func (m *Mirror) rebaseLocked(ctx context.Context, ws, branch, onto string) (string, error) {
	dir, err := m.existing(ws)
	if err != nil {
		return "", err
	}
	ref := "refs/heads/" + branch
	tip, err := m.resolve(ctx, dir, ref)
	if err != nil {
		return "", err
	}
	ontoSHA, err := m.resolve(ctx, dir, onto)
	if err != nil {
		return "", err
	}
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"merge-base", tip, ontoSHA}})
	if err != nil {
		return "", fmt.Errorf("no common history with %s: %w", onto, err)
	}
	base := strings.TrimSpace(out)
	if base == ontoSHA {
		return tip, nil
	}
	out, err = m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"rev-list", "--reverse", "--topo-order", "--parents", base + ".." + tip}})
	if err != nil {
		return "", err
	}
	type pick struct{ commit, parent string }
	var picks []pick
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return "", fmt.Errorf("commit %.12s has %d parents: %w", f[0], len(f)-1, ErrNotLinear)
		}
		picks = append(picks, pick{f[0], f[1]})
	}

	newTip := ontoSHA
	for _, p := range picks {
		next, err := m.pick(ctx, dir, p.commit, p.parent, newTip)
		if err != nil {
			return "", err
		}
		newTip = next
	}
	if _, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"update-ref", "-m", "fetch: rebase onto " + onto, ref, newTip, tip}}); err != nil {
		return "", err
	}
	m.log.Info("mirror: rebased", logWorkspace, ws, logBranch, branch, "onto", onto, "commits", len(picks), "commit", newTip)
	return newTip, nil
}

// pick applies commit (whose parent is parent) on top of newParent and
// returns the new commit, or newParent when the commit became empty.
func (m *Mirror) pick(ctx context.Context, dir, commit, parent, newParent string) (string, error) {
	parentTree, err := m.tree(ctx, dir, newParent)
	if err != nil {
		return "", err
	}
	// A throw-away commit with newParent's tree and commit's parent as its
	// parent: merged with commit, the merge base is parent.
	virtual, err := m.writeCommit(ctx, dir, rawCommit{tree: parentTree, parents: []string{parent}, author: m.committerLine(), message: "fetch: rebase base\n"})
	if err != nil {
		return "", err
	}
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", virtual, commit}})
	var ge *gitrun.GitError
	switch {
	case err == nil:
	case errors.As(err, &ge) && ge.ExitCode == 1:
		fields := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
		var files []string
		for _, f := range fields[min(1, len(fields)):] {
			if f != "" && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		return "", &ConflictError{Commit: commit, Files: files}
	default:
		return "", err
	}
	tree, _, _ := strings.Cut(out, "\x00")
	tree = strings.TrimSpace(tree)
	if checkSHA(tree) != nil {
		return "", fmt.Errorf("merge-tree printed %q, not a tree", tree)
	}
	if tree == parentTree {
		oldTree, err := m.tree(ctx, dir, commit)
		if err != nil {
			return "", err
		}
		oldParentTree, err := m.tree(ctx, dir, parent)
		if err != nil {
			return "", err
		}
		if oldTree != oldParentTree {
			return newParent, nil // became empty: its change is in newParent already
		}
	}
	raw, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"cat-file", "commit", commit}})
	if err != nil {
		return "", err
	}
	orig, err := parseCommit(raw)
	if err != nil {
		return "", fmt.Errorf("commit %.12s: %w", commit, err)
	}
	return m.writeCommit(ctx, dir, rawCommit{
		tree:     tree,
		parents:  []string{newParent},
		author:   orig.author,
		encoding: orig.encoding,
		message:  orig.message,
	})
}

func (m *Mirror) tree(ctx context.Context, dir, commit string) (string, error) {
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"rev-parse", "--verify", commit + "^{tree}"}})
	return strings.TrimSpace(out), err
}

// rawCommit is a commit object's parts that Rebase keeps or sets.
type rawCommit struct {
	tree     string
	parents  []string
	author   string // the author line's value: "Name <email> 1700000000 +0200"
	encoding string
	message  string
}

// committerLine is Config.Committer at Config.Now, as an author or
// committer line's value.
func (m *Mirror) committerLine() string {
	now := m.cfg.Now()
	return fmt.Sprintf("%s <%s> %d %s", m.cfg.Committer.Name, m.cfg.Committer.Email, now.Unix(), now.Format("-0700"))
}

// writeCommit writes c (committed by Config.Committer now) and returns its
// name.
func (m *Mirror) writeCommit(ctx context.Context, dir string, c rawCommit) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", c.tree)
	for _, p := range c.parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n", c.author, m.committerLine())
	if c.encoding != "" {
		fmt.Fprintf(&b, "encoding %s\n", c.encoding)
	}
	b.WriteString("\n")
	b.WriteString(c.message)
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"hash-object", "-t", "commit", "-w", "--stdin"}, stdin: strings.NewReader(b.String())})
	if err != nil {
		return "", err
	}
	sha := strings.TrimSpace(out)
	if checkSHA(sha) != nil {
		return "", fmt.Errorf("hash-object printed %q", sha)
	}
	return sha, nil
}

// parseCommit reads a raw commit object (git cat-file commit): its author
// line, encoding and message. Other headers (signatures, mergetags,
// extra headers) are dropped.
func parseCommit(raw string) (rawCommit, error) {
	head, msg, ok := strings.Cut(raw, "\n\n")
	if !ok {
		head, msg = strings.TrimSuffix(raw, "\n"), ""
	}
	var c rawCommit
	for _, line := range strings.Split(head, "\n") {
		switch {
		case strings.HasPrefix(line, "author "):
			c.author = strings.TrimPrefix(line, "author ")
		case strings.HasPrefix(line, "encoding "):
			c.encoding = strings.TrimPrefix(line, "encoding ")
		}
	}
	if c.author == "" {
		return rawCommit{}, fmt.Errorf("no author line")
	}
	c.message = msg
	return c, nil
}
