package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHarnessNamesReadAsWords: a wrong FETCH_HARNESS gets the harnesses
// as a list a person reads ("claude, codex, …"), not as a Go slice.
func TestHarnessNamesReadAsWords(t *testing.T) {
	code, _, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": t.TempDir(), envHarness: "cursor-agent"}, "", "task", "ls")
	want := `FETCH_HARNESS must be one of aider, claude, codex, copilot, cursor, gemini, opencode, qwen or acp:COMMAND [ARGS…], got "cursor-agent"`
	if code != exitUsage || !strings.Contains(errs, want) {
		t.Errorf("FETCH_HARNESS=cursor-agent: exit %d, %q; want %q", code, errs, want)
	}
}

// TestBuildImagesTakesCursorByEitherName: the cursor harness runs the
// cursor-agent CLI; scripts/build-images.sh takes either name for it, and
// without its executable says how to get one.
func TestBuildImagesTakesCursorByEitherName(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	exe := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(args ...string) (string, error) {
		c := exec.Command("bash", append([]string{"scripts/build-images.sh", "--dry-run", "--kennel-only"}, args...)...)
		c.Dir = filepath.Join("..", "..")
		out, err := c.CombinedOutput()
		return string(out), err
	}
	for _, cli := range []string{"cursor=" + exe, "cursor-agent=" + exe, "claude,cursor=" + exe} {
		out, err := script("--cli", cli)
		if err != nil || !strings.Contains(out, "cursor-agent (kennel only)") {
			t.Errorf("--cli %s: %v %q; want cursor-agent built in", cli, err, out)
		}
	}
	for _, cli := range []string{"cursor", "cursor-agent"} {
		out, err := script("--cli", cli)
		if err == nil || !strings.Contains(out, "--cli cursor-agent=FILE (its installer: curl https://cursor.com/install -fsS | bash)") {
			t.Errorf("--cli %s without a file: %v %q; want how to give its executable", cli, err, out)
		}
	}
}
