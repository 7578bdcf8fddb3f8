package workspace

import (
	"context"
	"fmt"

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
