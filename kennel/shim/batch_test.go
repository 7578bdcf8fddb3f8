package shim

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func runBatchJSON(t *testing.T, program string) (BatchResult, int, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := runBatch(context.Background(), strings.NewReader(program), &out, &errOut)
	var res BatchResult
	if code == ExitOK {
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			t.Fatalf("batch printed %q: %v", out.String(), err)
		}
	}
	return res, code, errOut.String()
}

func TestBatchRunsStepsInOrderWithCaptures(t *testing.T) {
	dir := t.TempDir()
	prog, _ := json.Marshal(Batch{Steps: []BatchStep{
		{Argv: []string{"sh", "-c", "echo first; echo second"}, Capture: "one"},
		{Argv: []string{"sh", "-c", `printf '%s|%s' "$1" "$V"`, "sh", "got ${one}"}, Env: []string{"V=${one}!"}},
		{Argv: []string{"sh", "-c", `printf '%s|%s' "$1" "$V"; echo oops >&2; exit 3`, "sh", "as typed ${one}"}, Env: []string{"V=${one}!"}, AllowFail: true, Literal: true},
		{Argv: []string{"pwd"}, Dir: dir},
		{Argv: []string{"sh", "-c", "exit 4"}},
		{Argv: []string{"echo", "never"}},
	}})
	res, code, stderr := runBatchJSON(t, string(prog))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(res.Steps) != 5 {
		t.Fatalf("%d steps ran; want 5 (the batch ends at the first failure not allowed): %+v", len(res.Steps), res.Steps)
	}
	if got := res.Steps[1].Stdout; got != "got first|first!" {
		t.Errorf("captured value in argv and env: %q", got)
	}
	if s := res.Steps[2]; s.Exit != 3 || !strings.Contains(s.Stderr, "oops") || s.Stdout != "as typed ${one}|${one}!" {
		t.Errorf("allowed failure of a literal step: %+v", s)
	}
	if got, _ := filepath.EvalSymlinks(strings.TrimSpace(res.Steps[3].Stdout)); got != mustEval(t, dir) {
		t.Errorf("dir: %q, want %q", res.Steps[3].Stdout, dir)
	}
	if res.Steps[4].Exit != 4 {
		t.Errorf("failing step: %+v", res.Steps[4])
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBatchRefusesBadPrograms(t *testing.T) {
	for _, prog := range []string{
		``, `{}`, `{"steps":[]}`, `{"steps":[{"argv":[]}]}`,
		`{"steps":[{"argv":["true"],"capture":"a b"}]}`,
		`{"steps":[{"argv":["true"],"env":["=x"]}]}`,
		`{"steps":[{"argv":["true"],"shell":true}]}`,
	} {
		if _, code, _ := runBatchJSON(t, prog); code != ExitUsage {
			t.Errorf("%q: exit %d; want %d", prog, code, ExitUsage)
		}
	}
}

func TestBatchMissingCommandAndBoundedOutput(t *testing.T) {
	prog, _ := json.Marshal(Batch{Steps: []BatchStep{
		{Argv: []string{"/nonexistent/cmd"}, AllowFail: true},
		{Argv: []string{"head", "-c", "20000000", "/dev/zero"}},
	}})
	res, code, stderr := runBatchJSON(t, string(prog))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if res.Steps[0].Exit != 127 {
		t.Errorf("missing command: %+v", res.Steps[0])
	}
	if s := res.Steps[1]; !s.Truncated || len(s.Stdout) != MaxBatchStdout {
		t.Errorf("output over the bound: truncated %v, %d bytes", s.Truncated, len(s.Stdout))
	}
}
