package doctor

import (
	"strings"
	"testing"
)

// TestBypassChecks: a warning for each one-shot CLI that is the default or
// installed, none for two-way CLIs or one-shot CLIs that are neither.
func TestBypassChecks(t *testing.T) {
	hs := []Harness{
		{Name: "claude", Program: "claude", Default: true},
		{Name: "aider", Program: "aider", OneShot: true},
		{Name: "cursor", Program: "cursor-agent", OneShot: true},
		{Name: "codex", Program: "codex"},
	}
	got := BypassChecks(hs, map[string]bool{"aider": true, "codex": true})
	if len(got) != 1 || got[0].Name != "permissions aider" || got[0].Status != Warn ||
		!strings.Contains(got[0].Detail, "bypass its permissions") || !strings.Contains(got[0].Detail, "kennel is the boundary") {
		t.Fatalf("checks %+v", got)
	}
	hs[2].Default = true
	if got := BypassChecks(hs, nil); len(got) != 1 || got[0].Name != "permissions cursor" {
		t.Errorf("the default one-shot CLI, nothing known installed: %+v", got)
	}
	var r Report
	r.Add(BypassChecks(hs, nil)...)
	if r.Failed() {
		t.Error("a one-shot CLI fails the report")
	}
}
