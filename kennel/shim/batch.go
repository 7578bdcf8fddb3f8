package shim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"regexp"
	"strings"
	"sync"
)

// CmdBatch runs a sequence of commands given as JSON on stdin in one exec
// (Batch), and prints their results as JSON (BatchResult): Fetch's own
// work around a task (git in the worktree) costs one exec instead of one
// per command, which matters most on a remote engine.
const CmdBatch = "batch"

// BatchArgv is the argv of a batch; its program goes to its stdin.
func BatchArgv() []string { return []string{Path, CmdBatch} }

// Limits of a batch.
const (
	// MaxBatchSteps bounds the steps of one batch.
	MaxBatchSteps = 64
	// MaxBatchStdout bounds the stdout kept of all steps together; a step's
	// output past it is cut (BatchStepResult.Truncated).
	MaxBatchStdout = 8 << 20
	// batchStderrTail bounds the stderr kept of each step.
	batchStderrTail = 2 << 10
	// maxBatchInput bounds the program read from stdin.
	maxBatchInput = 4 << 20
)

// Batch is a sequence of commands. They run in order, each as a child of
// the shim with the shim's environment plus its own; the first failing
// step that does not allow failure ends the batch.
type Batch struct {
	Steps []BatchStep `json:"steps"`
	// Env, when set, replaces the shim's environment as the steps' base
	// (the shim's PATH is kept); each step's Env adds to it.
	Env []string `json:"env,omitempty"`
}

// BatchStep is one command.
type BatchStep struct {
	// Argv is run without a shell. "${name}" in an element is replaced by
	// what an earlier step captured as name.
	Argv []string `json:"argv"`
	// Env adds variables (KEY=VALUE; "${name}" is replaced as in Argv).
	Env []string `json:"env,omitempty"`
	// Dir is the working directory; the shim's when empty.
	Dir string `json:"dir,omitempty"`
	// AllowFail: a non-zero exit does not end the batch.
	AllowFail bool `json:"allow_fail,omitempty"`
	// Capture names the step's trimmed first stdout line for later steps.
	Capture string `json:"capture,omitempty"`
	// Captures names the step's stdout lines, in order, like Capture.
	Captures []string `json:"captures,omitempty"`
	// Base64: the step's stdout is binary; its result holds it base64
	// encoded (what a JSON string cannot carry raw).
	Base64 bool `json:"base64,omitempty"`
	// Parallel: the step runs at the same time as the parallel steps next
	// to it (a group); it may not capture. A failure in the group that is
	// not allowed ends the batch after the whole group.
	Parallel bool `json:"parallel,omitempty"`
	// Literal: Argv and Env are used as given, "${name}" and all (text
	// such as a commit message that holds what a user typed).
	Literal bool `json:"literal,omitempty"`
}

// BatchResult is what a batch printed: one result per step that ran.
type BatchResult struct {
	Steps []BatchStepResult `json:"steps"`
	// OK and Vars are set in the prepared line of a prepare whose steps
	// all passed: Vars are their captures, which the run's Record
	// program expands.
	OK   bool              `json:"ok,omitempty"`
	Vars map[string]string `json:"vars,omitempty"`
}

// BatchStepResult is how one step ended.
type BatchStepResult struct {
	// Exit is the exit code; 127 when the command could not be started.
	Exit      int    `json:"exit"`
	Stdout    string `json:"stdout"`
	Truncated bool   `json:"truncated,omitempty"`
	// Stderr is the end of the step's stderr.
	Stderr string `json:"stderr,omitempty"`
}

var captureRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
var captureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// runBatch reads a Batch from stdin, runs it and prints its BatchResult.
// It exits 0 whenever the result was printed (the steps' codes are in it).
func runBatch(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	var b Batch
	dec := json.NewDecoder(io.LimitReader(stdin, maxBatchInput))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: batch: read the program: %v\n", err)
		return ExitUsage
	}
	if err := b.check(); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: batch: %v\n", err)
		return ExitUsage
	}
	res, _ := b.run(ctx, nil)
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: batch: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

func (b Batch) check() error {
	if len(b.Steps) == 0 || len(b.Steps) > MaxBatchSteps {
		return fmt.Errorf("%d steps; want 1 to %d", len(b.Steps), MaxBatchSteps)
	}
	for _, kv := range b.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("invalid variable %q", kv)
		}
	}
	for i, s := range b.Steps {
		if len(s.Argv) == 0 || s.Argv[0] == "" {
			return fmt.Errorf("step %d: no command", i)
		}
		if s.Parallel && (s.Capture != "" || len(s.Captures) > 0) {
			return fmt.Errorf("step %d: a parallel step may not capture", i)
		}
		for _, name := range append([]string{s.Capture}, s.Captures...) {
			if name != "" && !captureName.MatchString(name) {
				return fmt.Errorf("step %d: invalid capture name %q", i, name)
			}
		}
		for _, kv := range s.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("step %d: invalid variable %q", i, kv)
			}
		}
	}
	return nil
}

// Expand replaces each "${name}" in s by vars[name] (a capture).
func Expand(s string, vars map[string]string) string {
	return captureRef.ReplaceAllStringFunc(s, func(m string) string { return vars[m[2:len(m)-1]] })
}

// Captured is what a step's stdout gives a capture: its trimmed first line.
func Captured(stdout string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(stdout), "\n")
	return line
}

// Record records what step s printed (stdout) in vars, for later steps.
func (s BatchStep) Record(stdout string, vars map[string]string) {
	if s.Capture != "" {
		vars[s.Capture] = Captured(stdout)
	}
	lines := strings.Split(stdout, "\n")
	for i, name := range s.Captures {
		if i < len(lines) {
			vars[name] = strings.TrimSpace(lines[i])
		} else {
			vars[name] = ""
		}
	}
}

// run runs the steps, "${name}" expanded from vars (captures of an
// earlier program; nil for none) and from the steps' own captures, and
// returns their results and every capture.
func (b Batch) run(ctx context.Context, vars map[string]string) (BatchResult, map[string]string) {
	vars = maps.Clone(vars)
	if vars == nil {
		vars = map[string]string{}
	}
	budget := MaxBatchStdout
	var res BatchResult
	for i := 0; i < len(b.Steps); {
		end := i + 1
		for b.Steps[i].Parallel && end < len(b.Steps) && b.Steps[end].Parallel {
			end++
		}
		group := b.Steps[i:end]
		outs := make([]*boundedBuffer, len(group))
		results := make([]BatchStepResult, len(group))
		var wg sync.WaitGroup
		for k, s := range group {
			// Each step of a group may use what is left; the group's
			// total is then taken from it.
			outs[k] = &boundedBuffer{max: budget}
			wg.Add(1)
			go func() { // ends with the step; waited for below
				defer wg.Done()
				results[k] = b.runOne(ctx, s, vars, outs[k])
			}()
		}
		wg.Wait()
		stop := false
		for k, s := range group {
			r := results[k]
			budget -= outs[k].buf.Len()
			if s.Base64 {
				r.Stdout = base64.StdEncoding.EncodeToString(outs[k].buf.Bytes())
			} else {
				s.Record(r.Stdout, vars)
			}
			res.Steps = append(res.Steps, r)
			stop = stop || r.Exit != 0 && !s.AllowFail
		}
		if stop || ctx.Err() != nil {
			break
		}
		i = end
	}
	return res, vars
}

// runOne runs step s with the captures in vars (only read here) and its
// stdout going to out.
func (b Batch) runOne(ctx context.Context, s BatchStep, vars map[string]string, out *boundedBuffer) BatchStepResult {
	expand := func(v string) string { return Expand(v, vars) }
	if s.Literal {
		expand = func(v string) string { return v }
	}
	argv := make([]string, len(s.Argv))
	for i, a := range s.Argv {
		argv[i] = expand(a)
	}
	errTail := &tailBuffer{max: batchStderrTail}
	var r BatchStepResult
	env := b.stepEnv()
	for _, kv := range s.Env {
		env = append(env, expand(kv))
	}
	switch {
	case isShim(argv, CmdForget), isShim(argv, CmdOutfiles):
		r.Exit = Main(ctx, argv[1:], out, errTail)
	case isShim(argv, CmdWorktree), isShim(argv, CmdBundle):
		r.Exit = gitCommand(ctx, argv[1:], s.Dir, env, out, errTail)
	default:
		r.Exit = runStep(ctx, argv, s.Dir, env, nil, out, errTail)
	}
	r.Stdout, r.Truncated, r.Stderr = out.buf.String(), out.cut, errTail.String()
	return r
}

// runStep runs one step's command (stdin /dev/null when nil) and returns
// its exit code: 127 when it could not be started.
func runStep(ctx context.Context, argv []string, dir string, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return exitCode(ee.ProcessState)
	default:
		stderr.Write([]byte(err.Error()))
		return 127
	}
}

// isShim reports whether argv is this shim's command cmd, which a batch
// runs without starting a process of its own: forget only removes files,
// outfiles only reads and removes them,
// worktree and bundle start git themselves.
func isShim(argv []string, cmd string) bool {
	return len(argv) >= 2 && argv[0] == Path && argv[1] == cmd
}

// boundedBuffer keeps the first max bytes written.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.buf.Write(p[:max(room, 0)])
		b.cut = true
		return len(p), nil
	}
	return b.buf.Write(p)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
