package task

import (
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// TestOldShim: the refusals of a fetch-shim older than this Fetch, as it
// prints them, are told from a CLI's own failures.
func TestOldShim(t *testing.T) {
	tests := []struct {
		name string
		out  harness.Outcome
		want bool
	}{
		{"no prepare command", harness.Outcome{ExitCode: shim.ExitUsage, StderrTail: `fetch-shim: unknown command "prepare"`}, true},
		{"no --record", harness.Outcome{ExitCode: shim.ExitShimFailed, StderrTail: "flag provided but not defined: -record\nusage: ..."}, true},
		{"no --sweep", harness.Outcome{ExitCode: shim.ExitShimFailed, StderrTail: "flag provided but not defined: -sweep\nusage: ..."}, true},
		{"no fetch-shim init", harness.Outcome{ExitCode: shim.ExitShimFailed, StderrTail: "fetch-shim: run --sweep: " + shim.NoInitMessage + ` (it is "/usr/bin/tini -- sleep infinity"): rebuild the kennel image`}, true},
		{"the CLI failed", harness.Outcome{ExitCode: 1, StderrTail: "Error: unknown command"}, false},
		{"the run printed its worktree", harness.Outcome{ExitCode: shim.ExitShimFailed, StderrTail: "flag provided but not defined: -x", Prepared: []byte("{}")}, false},
	}
	for _, tt := range tests {
		if got := oldShim(tt.out); got != tt.want {
			t.Errorf("%s: oldShim = %v, want %v", tt.name, got, tt.want)
		}
	}
}
