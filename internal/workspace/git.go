package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// maxGitOutput bounds what is kept of a git command's stdout; a diff
// larger than this is cut (the caller says so).
const maxGitOutput = gitrun.DefaultMaxOutput

// identity is the committer of the commits Fetch makes itself.
var identity = []string{"-c", "user.name=Fetch", "-c", "user.email=fetch@localhost", "-c", "commit.gpgsign=false"}

// git runs git with args in dir, in the kennel of the workspace at ws, and
// returns its stdout, bounded.
func (r *Registry) git(ctx context.Context, ws, dir string, args ...string) (string, error) {
	out, truncated, err := r.gitBounded(ctx, ws, dir, args...)
	if err == nil && truncated {
		return out, fmt.Errorf("git %s: output over %d bytes", args[0], maxGitOutput)
	}
	return out, err
}

// gitBounded runs git in the workspace's kennel and reports whether its
// output was cut at maxGitOutput.
func (r *Registry) gitBounded(ctx context.Context, ws, dir string, args ...string) (string, bool, error) {
	if r.gitrun == nil {
		return "", false, fmt.Errorf("git %s: %w", args[0], ErrNoKennel)
	}
	if dir == ws {
		dir = ""
	}
	out, err := r.gitrun.Run(ctx, gitrun.Cmd{Workspace: ws, Dir: dir, Args: args, MaxOutput: maxGitOutput})
	if err != nil {
		return "", false, err
	}
	return out.Stdout, out.Truncated, nil
}

// maxOriginLen bounds an origin URL read from a workspace.
const maxOriginLen = 2048

// Origin returns the URL of a workspace's remote "origin" (read in its
// kennel: the .git/config it comes from is kennel-written, so the caller
// treats it as a claim to check, not a fact). "" when it has none.
func (r *Registry) Origin(ctx context.Context, name string) (string, error) {
	dir, err := r.Path(name)
	if err != nil {
		return "", err
	}
	out, truncated, err := r.gitBounded(ctx, dir, dir, "config", "--get", "remote.origin.url")
	var ge *gitrun.GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil // not set
	}
	if err != nil {
		return "", err
	}
	url := strings.TrimSpace(out)
	if truncated || len(url) > maxOriginLen || strings.ContainsAny(url, "\n\r") {
		return "", fmt.Errorf("workspace %s: its origin URL is not one line of at most %d bytes", name, maxOriginLen)
	}
	return url, nil
}
