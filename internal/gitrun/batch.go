package gitrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// Step is one command of a batch: git with Args (after Hardening), or, with
// Argv, another program (a fixed script with its arguments).
type Step struct {
	Args []string
	Argv []string
	// Env adds variables; only GIT_INDEX_FILE is accepted.
	Env []string
	// Dir is the working directory in the kennel; the workspace when empty.
	Dir string
	// AllowFail: a non-zero exit does not end the batch.
	AllowFail bool
	// Capture names the step's trimmed first stdout line; "${name}" in a
	// later step's Args, Argv or Env is replaced by it.
	Capture string
	// Captures names the step's stdout lines, in order, like Capture.
	Captures []string
	// Base64: the step's stdout is binary, and its StepResult.Stdout
	// holds it base64 encoded (a shim without batch cannot run such a
	// step: it fails with exit 127).
	Base64 bool
	// Parallel: the step runs at the same time as the parallel steps next
	// to it; it may not capture (shim.BatchStep.Parallel).
	Parallel bool
	// Literal: Args, Argv and Env are used as given, "${name}" and all
	// (shim.BatchStep.Literal).
	Literal bool
}

// StepResult is how one step of a batch ended.
type StepResult struct {
	Exit      int
	Stdout    string
	Truncated bool
	Stderr    string
	args      []string
}

// Err is nil for a step that exited 0, else a *GitError.
func (r StepResult) Err() error {
	if r.Exit == 0 {
		return nil
	}
	return &GitError{Args: RedactArgs(r.args), ExitCode: r.Exit, Stderr: strings.TrimSpace(r.Stderr)}
}

// Lines returns Stdout's lines.
func (r StepResult) Lines() []string { return Output{Stdout: r.Stdout}.Lines() }

// batchTimeout bounds a whole batch.
const batchTimeout = 5 * time.Minute

// maxBatchJSON bounds what a batch prints (its steps' stdout, JSON-quoted).
const maxBatchJSON = 64 << 20

// Batch runs steps in order in the workspace's kennel in one exec (fetch-shim
// batch): the first failing step without AllowFail ends it. It returns one
// result per step that ran; a step that failed is not an error here (see
// StepResult.Err). A kennel image whose shim has no batch command gets the
// steps one exec each, with the same meaning.
func (g *Git) Batch(ctx context.Context, workspace string, steps []Step) ([]StepResult, error) {
	prog, err := Program(steps)
	if err != nil {
		return nil, fmt.Errorf("git batch: %w", err)
	}
	prog.Env = nil // the exec's environment is Env already
	in, err := json.Marshal(prog)
	if err != nil {
		return nil, fmt.Errorf("git batch: %w", err)
	}
	out := Capped{Max: maxBatchJSON}
	res, err := g.exec.Exec(ctx, kennel.ExecSpec{
		Workspace: workspace,
		Argv:      shim.BatchArgv(),
		Env:       slices.Clone(Env),
		Timeout:   batchTimeout,
		Stdin:     bytes.NewReader(in),
		Stdout:    &out,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("git batch: %w", err)
	}
	if res.ExitCode == shim.ExitUsage && strings.Contains(string(res.StderrTail), "unknown command") {
		return g.stepByStep(ctx, workspace, steps)
	}
	if res.ExitCode == shim.ExitUsage && strings.Contains(string(res.StderrTail), "unknown field") {
		return nil, fmt.Errorf("git batch: %w", ErrOldShim)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("git batch: exit code %d: %s", res.ExitCode, strings.TrimSpace(string(res.StderrTail)))
	}
	if out.Cut() {
		return nil, fmt.Errorf("git batch: output over %d bytes", maxBatchJSON)
	}
	results, err := Results(out.Bytes(), steps)
	if err != nil {
		return nil, fmt.Errorf("git batch: %w", err)
	}
	return results, nil
}

// Program is the shim's program for steps (git with Hardening, under Env):
// what Batch runs, and what a run's kennel.ExecSpec.Prepare takes.
func Program(steps []Step) (shim.Batch, error) {
	prog := shim.Batch{Env: slices.Clone(Env)}
	for i, s := range steps {
		argv := s.Argv
		if len(argv) == 0 {
			argv = append(Command(), s.Args...)
		}
		for _, kv := range s.Env {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(extraEnv, k) {
				return shim.Batch{}, fmt.Errorf("step %d: variable %s is not allowed", i, k)
			}
		}
		prog.Steps = append(prog.Steps, s.shim(argv))
	}
	return prog, nil
}

// Results reads the results of steps from what their program printed (a
// shim.BatchResult as JSON). Results past steps are dropped: the program
// may have had more (housekeeping that the reader, after a restart, does
// not know of).
func Results(printed []byte, steps []Step) ([]StepResult, error) {
	var br shim.BatchResult
	if err := json.Unmarshal(printed, &br); err != nil {
		return nil, fmt.Errorf("read the results: %w", err)
	}
	if len(br.Steps) == 0 {
		return nil, fmt.Errorf("no results for %d steps", len(steps))
	}
	br.Steps = br.Steps[:min(len(br.Steps), len(steps))]
	results := make([]StepResult, len(br.Steps))
	for i, r := range br.Steps {
		results[i] = StepResult{Exit: r.Exit, Stdout: r.Stdout, Truncated: r.Truncated, Stderr: r.Stderr, args: stepArgs(steps[i])}
	}
	return results, nil
}

// shim is the shim's step for s, which runs argv.
func (s Step) shim(argv []string) shim.BatchStep {
	return shim.BatchStep{Argv: argv, Env: s.Env, Dir: s.Dir, AllowFail: s.AllowFail, Capture: s.Capture, Captures: s.Captures, Base64: s.Base64, Parallel: s.Parallel, Literal: s.Literal}
}

// stepArgs names what s runs in its error: git's arguments, a shim
// command's (its worktree or bundle is git's work), or the argv.
func stepArgs(s Step) []string {
	switch {
	case len(s.Argv) > 1 && s.Argv[0] == shim.Path:
		return s.Argv[1:]
	case len(s.Argv) > 0:
		return s.Argv
	}
	return s.Args
}

// Command is the git command of a batch's git steps: git with Hardening.
// A shim command that runs git itself (shim.WorktreeArgv) is given it.
func Command() []string { return append([]string{"git"}, Hardening...) }

// WorktreeStep is the step that makes a task's worktree at path, on a new
// branch from the commit repo's HEAD names, with pattern kept out of the
// repository's status: the shim's worktree command, which starts one git
// where git worktree add starts four. It prints three lines: the base, the
// exclude file and HEAD's full name; a failure before them is that there
// is no commit to branch from (shim.CmdWorktree).
func WorktreeStep(repo, path, branch, pattern string) Step {
	return Step{Argv: shim.WorktreeArgv(repo, path, branch, pattern, Command())}
}

// BundleStep is the step, run in the branch's work tree dir, that prints a
// git bundle of ref over the commit not (which may be a capture): the
// shim's bundle command, which starts pack-objects alone where git bundle
// create starts two processes. It fails when ref is still at not
// (shim.CmdBundle).
func BundleStep(dir, ref, not string) Step {
	return Step{Dir: dir, Argv: shim.BundleArgv(ref, not, Command()), Base64: true}
}

// IsObjectID reports whether s is a full SHA-1 or SHA-256 object name.
func IsObjectID(s string) bool { return shim.IsObjectID(s) }

// OldShim reports whether the step was a shim command the kennel image's
// shim does not know (ErrOldShim).
func (r StepResult) OldShim() bool {
	return r.Exit == shim.ExitUsage && strings.Contains(r.Stderr, "fetch-shim: unknown command")
}

// stepByStep runs a batch one exec per step, for a shim without batch.
func (g *Git) stepByStep(ctx context.Context, workspace string, steps []Step) ([]StepResult, error) {
	vars := map[string]string{}
	expand := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = shim.Expand(s, vars)
		}
		return out
	}
	var results []StepResult
	for _, s := range steps {
		expand := expand
		if s.Literal {
			expand = slices.Clone[[]string]
		}
		var r StepResult
		switch {
		case s.Base64:
			// Binary output does not survive the line handler.
			r = StepResult{Exit: 127, Stderr: "the kennel's fetch-shim has no batch command, which binary output needs", args: stepArgs(s)}
		case len(s.Argv) > 0:
			argv := expand(s.Argv)
			var stdout strings.Builder
			res, err := g.exec.Exec(ctx, kennel.ExecSpec{Workspace: workspace, Dir: s.Dir, Argv: argv, Env: slices.Clone(Env), Timeout: DefaultTimeout}, func(st kennel.Stream, line []byte) {
				if st == kennel.Stdout && stdout.Len() < DefaultMaxOutput {
					stdout.Write(line)
					stdout.WriteByte('\n')
				}
			})
			if err != nil {
				return results, fmt.Errorf("git batch: %w", err)
			}
			r = StepResult{Exit: res.ExitCode, Stdout: stdout.String(), Stderr: string(res.StderrTail), args: argv}
		default:
			args := expand(s.Args)
			out, err := g.Run(ctx, Cmd{Workspace: workspace, Dir: s.Dir, Args: args, Env: expand(s.Env)})
			r = StepResult{Stdout: out.Stdout, Truncated: out.Truncated, args: args}
			if ge, ok := err.(*GitError); ok {
				r.Exit, r.Stderr = ge.ExitCode, ge.Stderr
			} else if err != nil {
				return results, err
			}
		}
		s.shim(nil).Record(r.Stdout, vars)
		results = append(results, r)
		if r.Exit != 0 && !s.AllowFail {
			break
		}
	}
	return results, nil
}
