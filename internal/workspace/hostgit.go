package workspace

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"

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
// published), with a minimal environment, as the RunAs user when set. Git
// on a published workspace runs in its kennel (r.git).
func (r *Registry) hostGit(ctx context.Context, dir string, args ...string) (string, error) {
	return r.hostGitAs(ctx, dir, r.runAs, args...)
}

// hostGitAs is hostGit as user as (nil: this process's user).
func (r *Registry) hostGitAs(ctx context.Context, dir string, as *user, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(slices.Clone(hostHardening), args...)...)
	cmd.Dir = dir
	cmd.Env = slices.Clone(hostEnv)
	if as != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(as.uid), Gid: uint32(as.gid)}}
	}
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
