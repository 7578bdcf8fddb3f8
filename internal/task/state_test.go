package task_test

import (
	"testing"

	"github.com/fetch-dev/fetch/internal/task"
)

func TestStates(t *testing.T) {
	for _, tc := range []struct {
		s                       task.State
		terminal, active, valid bool
		exit                    int
	}{
		{task.Queued, false, false, true, 1},
		{task.Running, false, true, true, 1},
		{task.WaitingInput, false, true, true, 2},
		{task.Succeeded, true, false, true, 0},
		{task.Failed, true, false, true, 1},
		{task.Cancelled, true, false, true, 3},
		{task.NeedsAttention, true, false, true, 2},
		{"done", false, false, false, 1},
	} {
		if tc.s.Terminal() != tc.terminal || tc.s.Active() != tc.active || tc.s.Valid() != tc.valid || tc.s.ExitCode() != tc.exit {
			t.Errorf("%s: terminal %v active %v valid %v exit %d", tc.s, tc.s.Terminal(), tc.s.Active(), tc.s.Valid(), tc.s.ExitCode())
		}
	}
}
