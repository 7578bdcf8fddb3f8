package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// maxHostStderr bounds the stderr tail kept for an error of host git.
const maxHostStderr = 2 << 10

// hostPath is the PATH of host git: it finds its helpers (ssh, the remote
// helpers) there, and nothing of Fetch's environment comes with it.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hostEnv is the whole environment of host git: no configuration of the
// system's or anyone's, no prompts, no pager, only the protocols clones
// may use. Never os.Environ: Fetch's secrets stay out of git's reach.
var hostEnv = []string{
	"PATH=" + hostPath,
	"HOME=/nonexistent",
	"XDG_CONFIG_HOME=/nonexistent",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_ASKPASS=true",
	"SSH_ASKPASS=true",
	"GIT_PAGER=cat",
	"LC_ALL=C",
	"GIT_ALLOW_PROTOCOL=https:ssh:file",
	"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
}

// hostHardening precedes every host git command (gitrun.Hardening, and no
// submodule is ever fetched).
var hostHardening = append(slices.Clone(gitrun.Hardening), "-c", "submodule.recurse=false")

// hostGit runs git on the host, only ever in a staging directory that
// Fetch has just made and no kennel has seen (a new workspace before it is
// published), with a minimal environment, as Fetch's own user: the RunAs
// user may not even reach the staging directory, and gets the finished
// tree (chown). Git on a published workspace runs in its kennel (r.git).
func (r *Registry) hostGit(ctx context.Context, dir string, args ...string) (string, error) {
	return r.hostGitEnv(ctx, dir, nil, args...)
}

// hostGitEnv is hostGit with env added to (and overriding) hostEnv.
func (r *Registry) hostGitEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	argv := append(append(slices.Clone(hostHardening), r.ca.GitArgs()...), args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(hostEnv), env...)
	stdout := &gitrun.Capped{Max: maxGitOutput}
	stderr := &gitrun.Capped{Max: maxHostStderr, Tail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("git %s: %w", args[0], context.Cause(ctx))
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return "", &gitrun.GitError{Args: gitrun.RedactArgs(args), ExitCode: exit.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.String(), nil
}

// trustSource writes, in the staging directory tmp, a git configuration
// that lifts git's ownership check for the repository of a file:// URL
// only (its path, its .git, and the same after resolving symlinks), and
// returns the environment that makes it host git's global configuration.
// The file is written by git itself: no path needs quoting here.
func (r *Registry) trustSource(ctx context.Context, tmp, rawURL string) ([]string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", rawURL, ErrInvalidURL)
	}
	src := filepath.Clean(u.Path)
	paths := []string{src, filepath.Join(src, ".git")}
	if real, err := filepath.EvalSymlinks(src); err == nil && real != src {
		paths = append(paths, real, filepath.Join(real, ".git"))
	}
	file := filepath.Join(tmp, ".trust.gitconfig")
	for _, p := range paths {
		if _, err := r.hostGit(ctx, tmp, "config", "--file", file, "--add", "safe.directory", p); err != nil {
			return nil, err
		}
	}
	return []string{"GIT_CONFIG_GLOBAL=" + file}, nil
}
