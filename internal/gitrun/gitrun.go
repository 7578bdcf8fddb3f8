package gitrun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// Defaults for Cmd fields left zero.
const (
	// DefaultTimeout bounds one git command (a fetch over a slow network, an
	// add of a large tree).
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxOutput bounds the stdout kept of one command.
	DefaultMaxOutput = 8 << 20
	// maxStderr bounds the stderr tail kept in a GitError.
	maxStderr = 2 << 10
)

// Exec runs a command in a workspace's kennel; *kennel.Kennel implements
// it (and harness.Runner is the same method).
type Exec interface {
	Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error)
}

// Hardening precedes every git subcommand.
var Hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "credential.helper=",
	"-c", "protocol.ext.allow=never",
	"-c", "safe.directory=*",
	"-c", "core.quotePath=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	// No maintenance started behind a commit: it would cost the batch a
	// process or more, and is the workspace owner's business.
	"-c", "maintenance.auto=false",
	"-c", "gc.auto=0",
}

// Env is the whole environment of every git command: an allowlist, never
// Fetch's own.
var Env = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_PAGER=cat",
	"GIT_ASKPASS=true",
	"SSH_ASKPASS=true",
	"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
	"GIT_ALLOW_PROTOCOL=https:ssh:git:file",
	"LC_ALL=C",
	"HOME=" + kennel.Home,
}

// extraEnv names the variables a Cmd may add.
var extraEnv = []string{"GIT_INDEX_FILE"}

// Git runs git commands in the workspaces' kennels.
type Git struct {
	exec Exec
}

// New returns a Git that runs through x.
func New(x Exec) *Git { return &Git{exec: x} }

// Cmd is one git command.
type Cmd struct {
	// Workspace is the workspace's absolute path; it selects the kennel.
	Workspace string
	// Dir is the working directory in the kennel; Workspace when empty.
	Dir string
	// Args follow "git" and Hardening.
	Args []string
	// Env adds variables to Env; only GIT_INDEX_FILE is accepted.
	Env []string
	// MaxOutput bounds the stdout kept; DefaultMaxOutput when 0.
	MaxOutput int
	// Timeout bounds the command; DefaultTimeout when 0.
	Timeout time.Duration
	// Stdin, when set, is the command's stdin (see kennel.ExecSpec.Stdin).
	Stdin io.Reader
	// Stdout, when set, receives stdout raw and unbounded (a bundle, a
	// pack); the writer bounds it by failing, which stops the command.
	// Output.Stdout is then empty.
	Stdout io.Writer
}

// Output is what a command printed.
type Output struct {
	// Stdout has a newline after every line, cut at Cmd.MaxOutput.
	Stdout string
	// Truncated: stdout was longer than Cmd.MaxOutput.
	Truncated bool
}

// Lines returns Stdout's lines.
func (o Output) Lines() []string {
	s := strings.TrimSuffix(o.Stdout, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Run runs c in the kennel. A non-zero exit is a *GitError.
func (g *Git) Run(ctx context.Context, c Cmd) (Output, error) {
	if len(c.Args) == 0 {
		return Output{}, fmt.Errorf("git: no arguments")
	}
	op := "git " + c.Args[0]
	env := slices.Clone(Env)
	for _, kv := range c.Env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(extraEnv, k) {
			return Output{}, fmt.Errorf("%s: variable %s is not allowed", op, k)
		}
		env = append(env, kv)
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	argv := append(Command(), c.Args...)
	var out strings.Builder
	var truncated bool
	res, err := g.exec.Exec(ctx, kennel.ExecSpec{
		Workspace: c.Workspace,
		Dir:       c.Dir,
		Argv:      argv,
		Env:       env,
		Timeout:   c.Timeout,
		Stdin:     c.Stdin,
		Stdout:    c.Stdout,
	}, func(stream kennel.Stream, line []byte) {
		if stream != kennel.Stdout || truncated {
			return
		}
		if out.Len()+len(line)+1 > c.MaxOutput {
			out.Write(line[:max(0, min(len(line), c.MaxOutput-out.Len()))])
			truncated = true
			return
		}
		out.Write(line)
		out.WriteByte('\n')
	})
	if err != nil {
		return Output{}, fmt.Errorf("%s: %w", op, err)
	}
	if res.ExitCode != 0 {
		tail := res.StderrTail
		if len(tail) > maxStderr {
			tail = tail[len(tail)-maxStderr:]
		}
		return Output{Stdout: out.String(), Truncated: truncated}, &GitError{Args: RedactArgs(c.Args), ExitCode: res.ExitCode, Stderr: strings.TrimSpace(string(tail))}
	}
	return Output{Stdout: out.String(), Truncated: truncated}, nil
}

// Output runs git with args in dir (the workspace when empty) and returns
// its stdout; output beyond DefaultMaxOutput is an error.
func (g *Git) Output(ctx context.Context, workspace, dir string, args ...string) (string, error) {
	out, err := g.Run(ctx, Cmd{Workspace: workspace, Dir: dir, Args: args})
	if err == nil && out.Truncated {
		return out.Stdout, fmt.Errorf("git %s: output over %d bytes", args[0], DefaultMaxOutput)
	}
	return out.Stdout, err
}
