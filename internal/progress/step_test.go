package progress_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
)

// TestStepDeniedCommand: a command the CLI refused (a read-only run) is
// shown denied, never as "$ cmd" as if it ran.
func TestStepDeniedCommand(t *testing.T) {
	tests := []struct {
		ev   harness.Event
		want string
	}{
		{harness.Event{Kind: harness.KindCommand, Command: "rm -rf build", Denied: true, Text: "This command requires approval"}, "🚫 denied: rm -rf build"},
		{harness.Event{Kind: harness.KindError, Tool: "Edit", Denied: true, Text: "Claude requested permissions to write to /w/a.go, but you haven't granted it yet."}, "🚫 denied: Edit"},
		{harness.Event{Kind: harness.KindCommand, Command: "go test ./..."}, "$ go test ./..."},
	}
	for _, tt := range tests {
		got := progress.Step(tt.ev, nil)
		if got != tt.want {
			t.Errorf("Step(%+v) = %q, want %q", tt.ev, got, tt.want)
		}
		if tt.ev.Denied && strings.HasPrefix(got, "$") {
			t.Errorf("a denied command shown as run: %q", got)
		}
	}
}
