package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// maxGitOutput bounds what is kept of a git command's stdout; a diff
// larger than this is cut (the caller says so).
const maxGitOutput = 8 << 20

// maxGitStderr bounds the stderr tail kept for an error.
const maxGitStderr = 2 << 10

// gitEnv is added to every git command: no prompts for credentials, no
// pager, messages in English, and only the protocols Fetch allows.
var gitEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat",
	"LC_ALL=C",
	"GIT_ALLOW_PROTOCOL=https:ssh:file",
	"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
}

// identity is the committer of the commits Fetch makes itself.
var identity = []string{"-c", "user.name=Fetch", "-c", "user.email=fetch@localhost", "-c", "commit.gpgsign=false"}

// git runs git with args in dir and returns its stdout, bounded.
func (r *Registry) git(ctx context.Context, dir string, args ...string) (string, error) {
	out, truncated, err := r.gitBounded(ctx, dir, args...)
	if err == nil && truncated {
		return out, fmt.Errorf("git %s: output over %d bytes", args[0], maxGitOutput)
	}
	return out, err
}

// gitBounded runs git and reports whether its output was cut at
// maxGitOutput.
func (r *Registry) gitBounded(ctx context.Context, dir string, args ...string) (string, bool, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	if r.runAs != nil {
		// As the kennel's user, git finds no configuration of its own:
		// the invoking user's home is not its to read.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.runAs.uid), Gid: uint32(r.runAs.gid)}}
		cmd.Env = append(cmd.Env, "HOME=/nonexistent", "XDG_CONFIG_HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1")
	}
	stdout := &capped{max: maxGitOutput}
	stderr := &capped{max: maxGitStderr, tail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if err != nil {
		ge := &GitError{Args: redactArgs(args), Code: -1, Stderr: strings.TrimSpace(stderr.String())}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			ge.Code = exit.ExitCode()
		} else if ctx.Err() == nil {
			return "", false, fmt.Errorf("git %s: %w", args[0], err)
		}
		if ctx.Err() != nil {
			return "", false, fmt.Errorf("git %s: %w", args[0], context.Cause(ctx))
		}
		return "", false, ge
	}
	return stdout.String(), stdout.cut, nil
}

// redactArgs drops the user information of URL arguments.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if scheme, rest, ok := strings.Cut(a, "://"); ok {
			if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
				a = scheme + "://" + rest[at+1:]
			}
		}
		out[i] = a
	}
	return out
}

// capped keeps at most max bytes of what is written: the head, or the
// tail when tail is set.
type capped struct {
	max  int
	tail bool
	buf  bytes.Buffer
	cut  bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if c.tail {
		c.buf.Write(p)
		if over := c.buf.Len() - c.max; over > 0 {
			c.buf.Next(over)
			c.cut = true
		}
		return n, nil
	}
	if room := c.max - c.buf.Len(); room < len(p) {
		p = p[:max(room, 0)]
		c.cut = true
	}
	c.buf.Write(p)
	return n, nil
}

func (c *capped) String() string { return c.buf.String() }
