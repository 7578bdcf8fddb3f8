package gitrun

import (
	"errors"
	"strconv"
	"testing"

	"github.com/fetch-dev/fetch/kennel/shim"
)

func TestOutStepAndReadOut(t *testing.T) {
	s := OutStep("/ws", "wt/.fetch/out", OutLimits{Files: 3, Bytes: 10, Total: 1 << 40})
	if !s.Base64 || !s.AllowFail || s.Argv[0] != shim.Path || s.Argv[1] != shim.CmdOutfiles {
		t.Fatalf("step %+v", s)
	}
	if got := s.Argv[len(s.Argv)-1]; got != strconv.Itoa(shim.MaxOutTotal) {
		t.Errorf("--max-total %s; want shim.MaxOutTotal (%d)", got, shim.MaxOutTotal)
	}
	l := OutLimits{Files: 3, Bytes: 10, Total: 100}
	for name, tc := range map[string]struct {
		r    StepResult
		want error
	}{
		"old shim":   {StepResult{Exit: shim.ExitUsage, Stderr: "fetch-shim: unknown command \"outfiles\""}, ErrOldShim},
		"failed":     {StepResult{Exit: 1, Stderr: "fetch-shim: outfiles: the folder: too many levels of symbolic links"}, nil},
		"truncated":  {StepResult{Truncated: true}, nil},
		"not base64": {StepResult{Stdout: "!!"}, nil},
	} {
		files, err := ReadOut(tc.r, l)
		if err == nil || files != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, %v; want an error (%v) and no files", name, files, err, tc.want)
		}
	}
	if files, err := ReadOut(StepResult{}, l); err != nil || len(files) != 0 {
		t.Errorf("empty output: %v, %v; want no files", files, err)
	}
}
