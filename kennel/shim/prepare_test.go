package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prepare runs the prepare command as a process (it replaces itself with
// the command) and returns stdout, stderr and the exit code.
func prepare(t *testing.T, dir string, b Batch, argv ...string) (string, string, int) {
	t.Helper()
	full, err := PrepareArgv(b, dir, argv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], full[1:]...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "SECRET_KEY=sk-1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run prepare: %v", err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// prepared reads the prepared line, which must be stderr's first.
func prepared(t *testing.T, stderr string) BatchResult {
	t.Helper()
	line, _, _ := strings.Cut(stderr, "\n")
	rest, ok := strings.CutPrefix(line, PreparedPrefix)
	if !ok {
		t.Fatalf("stderr does not start with the prepared line: %q", stderr)
	}
	var res BatchResult
	if err := json.Unmarshal([]byte(rest), &res); err != nil {
		t.Fatalf("prepared line %q: %v", rest, err)
	}
	return res
}

func TestPrepareRunsTheStepsThenTheCommandInTheirDirectory(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "made")
	b := Batch{
		Env: []string{"STEP_ONLY=yes"},
		Steps: []BatchStep{
			{Argv: []string{"sh", "-c", `echo "$SECRET_KEY|$STEP_ONLY"; mkdir made`}, Dir: ws},
			{Argv: []string{"sh", "-c", "echo skipped >&2; exit 3"}, AllowFail: true},
		},
	}
	stdout, stderr, code := prepare(t, dir, b, "sh", "-c", `pwd; echo "cmd:$SECRET_KEY|$STEP_ONLY"; echo late >&2`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := prepared(t, stderr)
	if len(res.Steps) != 2 || res.Steps[0].Stdout != "|yes\n" || res.Steps[1].Exit != 3 {
		t.Errorf("steps: %+v (a step sees Batch.Env, not the command's keys)", res.Steps)
	}
	want := mustEval(t, dir) + "\ncmd:sk-1|\n"
	if got := stdout; got != want {
		t.Errorf("command's stdout %q, want %q (it runs in dir, with its own environment)", got, want)
	}
	if !strings.HasSuffix(stderr, "\nlate\n") {
		t.Errorf("the command's stderr follows the prepared line: %q", stderr)
	}
}

func TestPrepareDoesNotStartTheCommandWhenAStepFails(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	b := Batch{Steps: []BatchStep{
		{Argv: []string{"sh", "-c", "echo no commit >&2; exit 128"}, Dir: ws},
		{Argv: []string{"touch", marker}},
	}}
	stdout, stderr, code := prepare(t, ws, b, "touch", marker)
	if code != ExitPrepareFailed {
		t.Fatalf("exit %d, want %d: %s", code, ExitPrepareFailed, stderr)
	}
	res := prepared(t, stderr)
	if len(res.Steps) != 1 || res.Steps[0].Exit != 128 || !strings.Contains(res.Steps[0].Stderr, "no commit") {
		t.Errorf("steps: %+v", res.Steps)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) || stdout != "" {
		t.Errorf("something ran after the failed step: %v, stdout %q", err, stdout)
	}
}

func TestPrepareReportsAMissingCommand(t *testing.T) {
	ws := t.TempDir()
	_, stderr, code := prepare(t, ws, Batch{Steps: []BatchStep{{Argv: []string{"true"}}}}, "no-such-program-here")
	if code != ExitNotFound {
		t.Errorf("exit %d, want %d: %s", code, ExitNotFound, stderr)
	}
	prepared(t, stderr)
}

func TestPrepareArgvRefusesAnEmptyBatch(t *testing.T) {
	if _, err := PrepareArgv(Batch{}, "/w", []string{"true"}); err == nil {
		t.Error("an empty batch was accepted")
	}
}

func TestBatchCapturesLinesAndBase64AndForgetsInProcess(t *testing.T) {
	prog, _ := json.Marshal(Batch{Steps: []BatchStep{
		{Argv: []string{"printf", `a\nb b\n`}, Captures: []string{"first", "second", "third"}},
		{Argv: []string{"printf", "%s|%s|%s", "${first}", "${second}", "${third}"}},
		{Argv: []string{"printf", `\000\377\n`}, Base64: true},
		{Argv: []string{Path, CmdForget, "--state", t.TempDir(), "--task", "gone"}},
	}})
	res, code, stderr := runBatchJSON(t, string(prog))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := res.Steps[1].Stdout; got != "a|b b|" {
		t.Errorf("captured lines: %q", got)
	}
	if got := res.Steps[2].Stdout; got != "AP8K" {
		t.Errorf("base64 stdout: %q", got)
	}
	if res.Steps[3].Exit != 0 {
		t.Errorf("forget of an unknown task, run in the batch's own process: %+v", res.Steps[3])
	}
}

func TestBatchRunsAParallelGroupAtTheSameTime(t *testing.T) {
	dir := t.TempDir()
	// Each step waits for the other's file: run one after the other, the
	// first would give up.
	meet := `touch "$1"; for i in $(seq 100); do [ -e "$2" ] && exit 0; sleep 0.05; done; exit 1`
	prog, _ := json.Marshal(Batch{Steps: []BatchStep{
		{Argv: []string{"sh", "-c", meet, "sh", "a", "b"}, Dir: dir, Parallel: true},
		{Argv: []string{"sh", "-c", meet, "sh", "b", "a"}, Dir: dir, Parallel: true},
		{Argv: []string{"sh", "-c", "exit 2"}, Parallel: true},
		{Argv: []string{"echo", "after the group"}},
	}})
	res, code, stderr := runBatchJSON(t, string(prog))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(res.Steps) != 3 || res.Steps[0].Exit != 0 || res.Steps[1].Exit != 0 || res.Steps[2].Exit != 2 {
		t.Errorf("the group's results, in order, and nothing after its failure: %+v", res.Steps)
	}
	bad, _ := json.Marshal(Batch{Steps: []BatchStep{{Argv: []string{"true"}, Parallel: true, Capture: "x"}}})
	if _, code, _ := runBatchJSON(t, string(bad)); code != ExitUsage {
		t.Errorf("a parallel step that captures: exit %d, want %d", code, ExitUsage)
	}
}
