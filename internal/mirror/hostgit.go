package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Bounds of host git's output.
const (
	// maxOutput bounds the stdout kept of a command.
	maxOutput = 8 << 20
	// maxStderr bounds the stderr tail an error carries.
	maxStderr = 2 << 10
	// waitDelay bounds the wait for a killed git's pipes.
	waitDelay = 5 * time.Second
)

// hostPath is host git's PATH: it finds its helpers (git-remote-https)
// there, and nothing of Fetch's environment comes with it.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hardening precedes every host git subcommand: gitrun's, and no redirect
// (a redirect would carry the authorization header to another host), no
// submodule.
var hardening = append(slices.Clone(gitrun.Hardening),
	"-c", "http.followRedirects=false",
	"-c", "submodule.recurse=false",
	"-c", "transfer.fsckObjects=true",
	"-c", "fetch.fsckObjects=true",
	"-c", "core.hooksPath=/dev/null",
)

// hostEnv is host git's whole environment but HOME and what a command
// adds (the remote's authorization).
func (m *Mirror) hostEnv() []string {
	return []string{
		"PATH=" + hostPath,
		"HOME=" + m.home(),
		"XDG_CONFIG_HOME=" + m.home(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=true",
		"SSH_ASKPASS=true",
		"GIT_PAGER=cat",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_ALLOW_PROTOCOL=https:http:file",
		"LC_ALL=C",
	}
}

// hostCmd is one git command on the host.
type hostCmd struct {
	gitDir  string // --git-dir and working directory; Root when empty
	args    []string
	env     []string // added to hostEnv (GIT_CONFIG_COUNT and friends, GIT_*_DATE, a quarantine's GIT_OBJECT_DIRECTORY)
	stdin   io.Reader
	max     int           // stdout bound; maxOutput when 0; over it is ErrTooLarge
	timeout time.Duration // Config.Timeout when 0
	secrets []string      // scrubbed from the error
}

// hostGit runs c and returns its stdout. A non-zero exit is a
// *gitrun.GitError with a scrubbed stderr tail.
func (m *Mirror) hostGit(ctx context.Context, c hostCmd) (string, error) {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = m.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(slices.Clone(hardening), m.cfg.CA.GitArgs()...)
	dir := m.cfg.Root
	if c.gitDir != "" {
		argv = append(argv, "--git-dir="+c.gitDir)
		dir = c.gitDir
	}
	argv = append(argv, c.args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = dir
	cmd.Env = append(m.hostEnv(), c.env...)
	cmd.Stdin = c.stdin
	cmd.WaitDelay = waitDelay
	limit := c.max
	if limit <= 0 {
		limit = maxOutput
	}
	stdout := &gitrun.Capped{Max: limit}
	stderr := &gitrun.Capped{Max: maxStderr, Tail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	op := "git " + c.args[0]
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w (%s)", op, context.Cause(ctx), scrub(strings.TrimSpace(stderr.String()), c.secrets))
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		return stdout.String(), &gitrun.GitError{
			Args:     scrubAll(gitrun.RedactArgs(c.args), c.secrets),
			ExitCode: exit.ExitCode(),
			Stderr:   scrub(strings.TrimSpace(stderr.String()), c.secrets),
		}
	}
	if stdout.Cut() {
		return stdout.String(), fmt.Errorf("%s: output over %d bytes: %w", op, limit, ErrTooLarge)
	}
	return stdout.String(), nil
}

// scrub replaces every secret in s.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}

func scrubAll(ss []string, secrets []string) []string {
	for i := range ss {
		ss[i] = scrub(ss[i], secrets)
	}
	return ss
}
