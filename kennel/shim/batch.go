package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
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
}

// BatchResult is what a batch printed: one result per step that ran.
type BatchResult struct {
	Steps []BatchStepResult `json:"steps"`
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
	res := b.run(ctx)
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
	for i, s := range b.Steps {
		if len(s.Argv) == 0 || s.Argv[0] == "" {
			return fmt.Errorf("step %d: no command", i)
		}
		if s.Capture != "" && !captureName.MatchString(s.Capture) {
			return fmt.Errorf("step %d: invalid capture name %q", i, s.Capture)
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

func (b Batch) run(ctx context.Context) BatchResult {
	vars := map[string]string{}
	expand := func(s string) string { return Expand(s, vars) }
	budget := MaxBatchStdout
	var res BatchResult
	for _, s := range b.Steps {
		argv := make([]string, len(s.Argv))
		for i, a := range s.Argv {
			argv[i] = expand(a)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = s.Dir
		cmd.Env = os.Environ()
		for _, kv := range s.Env {
			cmd.Env = append(cmd.Env, expand(kv))
		}
		cmd.Stdin = nil
		out := &boundedBuffer{max: budget}
		errTail := &tailBuffer{max: batchStderrTail}
		cmd.Stdout, cmd.Stderr = out, errTail
		r := BatchStepResult{}
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.Exit = exitCode(ee.ProcessState)
			} else {
				r.Exit = 127
				errTail.Write([]byte(err.Error()))
			}
		}
		budget -= out.buf.Len()
		r.Stdout, r.Truncated, r.Stderr = out.buf.String(), out.cut, errTail.String()
		if s.Capture != "" {
			vars[s.Capture] = Captured(r.Stdout)
		}
		res.Steps = append(res.Steps, r)
		if r.Exit != 0 && !s.AllowFail || ctx.Err() != nil {
			break
		}
	}
	return res
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
