package workspace

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Status is a workspace's git state.
type Status struct {
	Name string `json:"name"`
	// Branch is the checked-out branch; empty when HEAD is detached.
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// Upstream is the branch's upstream ("origin/main"), empty when none;
	// Ahead and Behind count commits relative to it.
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead"`
	Behind   int    `json:"behind"`
	// Staged, Modified, Untracked and Conflicted list paths relative to
	// the workspace. A file may be both staged and modified.
	Staged     []string `json:"staged,omitempty"`
	Modified   []string `json:"modified,omitempty"`
	Untracked  []string `json:"untracked,omitempty"`
	Conflicted []string `json:"conflicted,omitempty"`
	// LastCommit is nil in a repository without commits.
	LastCommit *Commit `json:"last_commit,omitempty"`
}

// Commit is one commit.
type Commit struct {
	Hash    string    `json:"hash"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	When    time.Time `json:"when"`
}

// Clean reports whether the work tree has nothing uncommitted.
func (s Status) Clean() bool {
	return len(s.Staged)+len(s.Modified)+len(s.Untracked)+len(s.Conflicted) == 0
}

// Status returns a workspace's git status, read in its kennel (started
// when it sleeps).
func (r *Registry) Status(ctx context.Context, name string) (Status, error) {
	return r.status(ctx, name, r.gitrun)
}

// StatusIfAwake is Status when the workspace's kennel runs; when it
// sleeps it starts nothing and returns an error wrapping kennel.ErrAsleep.
// For what only shows the state in passing (the agent's prompt).
func (r *Registry) StatusIfAwake(ctx context.Context, name string) (Status, error) {
	return r.status(ctx, name, r.awake)
}

func (r *Registry) status(ctx context.Context, name string, g *gitrun.Git) (Status, error) {
	p, err := r.Path(name)
	if err != nil {
		return Status{}, fmt.Errorf("workspace: status: %w", err)
	}
	if !r.isRepo(ctx, name, p) {
		return Status{}, fmt.Errorf("workspace: status %s: %w", name, ErrNotGit)
	}
	if g == nil {
		return Status{}, fmt.Errorf("workspace: status %s: %w", name, ErrNoKennel)
	}
	res, err := g.Run(ctx, gitrun.Cmd{Workspace: p, Args: []string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"}, MaxOutput: maxGitOutput})
	out := res.Stdout
	if err == nil && res.Truncated {
		err = fmt.Errorf("git status: output over %d bytes", maxGitOutput)
	}
	if err != nil {
		return Status{}, fmt.Errorf("workspace: status %s: %w", name, err)
	}
	st, err := parseStatus(strings.TrimSuffix(out, "\n"))
	if err != nil {
		return Status{}, fmt.Errorf("workspace: status %s: %w", name, err)
	}
	st.Name = name
	if c, err := r.lastCommit(ctx, p, p, "HEAD"); err == nil {
		st.LastCommit = c
	}
	return st, nil
}

// parseStatus reads `git status --porcelain=v2 --branch -z`.
func parseStatus(out string) (Status, error) {
	var st Status
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		e := fields[i]
		if e == "" {
			continue
		}
		switch e[0] {
		case '#':
			key, val, _ := strings.Cut(strings.TrimPrefix(e, "# "), " ")
			switch key {
			case "branch.head":
				if val == "(detached)" {
					st.Detached = true
				} else {
					st.Branch = val
				}
			case "branch.upstream":
				st.Upstream = val
			case "branch.ab":
				a, b, _ := strings.Cut(val, " ")
				st.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
				st.Behind, _ = strconv.Atoi(strings.TrimPrefix(b, "-"))
			}
		case '1', '2':
			n := 9
			if e[0] == '2' {
				n = 10
				i++ // the original path follows as its own field
			}
			parts := strings.SplitN(e, " ", n)
			if len(parts) != n || len(parts[1]) != 2 {
				return Status{}, fmt.Errorf("unreadable status entry %q", e)
			}
			path := parts[n-1]
			if parts[1][0] != '.' {
				st.Staged = append(st.Staged, path)
			}
			if parts[1][1] != '.' {
				st.Modified = append(st.Modified, path)
			}
		case 'u':
			parts := strings.SplitN(e, " ", 11)
			if len(parts) != 11 {
				return Status{}, fmt.Errorf("unreadable status entry %q", e)
			}
			st.Conflicted = append(st.Conflicted, parts[10])
		case '?':
			st.Untracked = append(st.Untracked, strings.TrimPrefix(e, "? "))
		case '!':
		default:
			return Status{}, fmt.Errorf("unreadable status entry %q", e)
		}
	}
	return st, nil
}

func (r *Registry) lastCommit(ctx context.Context, ws, dir, rev string) (*Commit, error) {
	out, err := r.git(ctx, ws, dir, "log", "--no-show-signature", "-1", "--format=%H%x00%s%x00%an%x00%cI", rev, "--")
	if err != nil {
		return nil, err
	}
	parts := strings.Split(strings.TrimRight(out, "\n"), "\x00")
	if len(parts) != 4 {
		return nil, fmt.Errorf("no commit")
	}
	when, _ := time.Parse(time.RFC3339, parts[3])
	return &Commit{Hash: parts[0], Subject: parts[1], Author: parts[2], When: when}, nil
}

func parseGitTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, strings.TrimSpace(s)) }
