package gitrun_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// oldShim is a kennel whose shim has no batch command: it refuses it as
// an older fetch-shim does, and answers each single command.
type oldShim struct{ argvs [][]string }

func (o *oldShim) Exec(_ context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	if slices.Equal(spec.Argv, shim.BatchArgv()) {
		return kennel.Result{ExitCode: shim.ExitUsage, StderrTail: []byte(`fetch-shim: unknown command "batch"`)}, nil
	}
	o.argvs = append(o.argvs, spec.Argv)
	last := spec.Argv[len(spec.Argv)-1]
	switch {
	case last == "HEAD":
		fn(kennel.Stdout, []byte("abc123"))
	case last == "fail":
		return kennel.Result{ExitCode: 1}, nil
	}
	return kennel.Result{}, nil
}

// A shim without batch gets the steps one exec each, with the same
// captures and the same end at a failure not allowed.
func TestBatchStepByStepOnAnOlderShim(t *testing.T) {
	k := &oldShim{}
	res, err := gitrun.New(k).Batch(t.Context(), "/ws", []gitrun.Step{
		{Args: []string{"rev-parse", "HEAD"}, Capture: "head"},
		{Argv: []string{"echo", "${head}"}},
		{Args: []string{"fail"}, AllowFail: true},
		{Args: []string{"fail"}},
		{Args: []string{"never"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || res[0].Stdout != "abc123\n" || res[2].Exit != 1 || res[3].Err() == nil {
		t.Fatalf("results: %+v", res)
	}
	if got := strings.Join(k.argvs[1], " "); got != "echo abc123" {
		t.Errorf("the capture was not substituted: %q", got)
	}
	if len(k.argvs) != 4 {
		t.Errorf("%d execs; want 4 (the batch ends at the failure)", len(k.argvs))
	}
}
