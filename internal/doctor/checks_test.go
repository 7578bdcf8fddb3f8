package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/kennel"
)

// TestCLIFixRuns: for every CLI a harness runs, the fix doctor prints when
// it is missing from the image is a scripts/build-images.sh line the
// script takes (run with --dry-run, FILE given as a real executable), and
// it keeps the CLIs the image already has.
func TestCLIFixRuns(t *testing.T) {
	programs := []string{"claude", "codex", "gemini", "copilot", "opencode", "qwen", "aider", "cursor-agent"}
	exe := filepath.Join(t.TempDir(), "cli")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, missing := range programs {
		t.Run(missing, func(t *testing.T) {
			hs := []Harness{{Name: "x-" + missing, Program: missing, Default: true}, {Name: "other", Program: "codex"}}
			if missing == "codex" {
				hs[1].Program = "claude"
			}
			probe := kennel.ProbeResult{Programs: []kennel.Program{{Name: missing}, {Name: hs[1].Program, Path: "/usr/local/bin/" + hs[1].Program}}}
			checks := CLIChecks(probe, "fetch-kennel:mine", hs)
			if len(checks) != 2 || checks[0].Status != Fail {
				t.Fatalf("checks %+v; want the missing default failing", checks)
			}
			fix := checks[0].Fix
			if strings.Contains(fix, "docker build") || !strings.Contains(fix, " --kennel-image fetch-kennel:mine") {
				t.Errorf("fix %q; want build-images.sh naming the image", fix)
			}
			out := runFix(t, fix, exe)
			if !strings.Contains(out, "would build fetch-kennel:mine") || !strings.Contains(out, missing) || !strings.Contains(out, hs[1].Program) {
				t.Errorf("fix %q builds %q; want %s and %s in fetch-kennel:mine", fix, out, missing, hs[1].Program)
			}
		})
	}
	// The image check's fix builds the default harness's CLI.
	for _, ps := range [][]string{nil, {"codex"}, {"cursor-agent"}} {
		want := "with CLIs: claude"
		if len(ps) > 0 {
			want = "with CLIs: " + ps[0]
		}
		out := runFix(t, BuildFix(kennel.DefaultImage, ps...), exe)
		if !strings.Contains(out, "would build "+kennel.DefaultImage) || !strings.Contains(out, want) {
			t.Errorf("image fix for %q builds %q; want %q", ps, out, want)
		}
	}
}

// runFix runs the command of a fix line (what comes before its first
// remark), FILE standing for exe, with --dry-run, from the repository.
func runFix(t *testing.T, fix, exe string) string {
	t.Helper()
	cmd, _, _ := strings.Cut(fix, " (")
	cmd, _, _ = strings.Cut(cmd, ", FILE")
	argv := strings.Fields(strings.ReplaceAll(cmd, "=FILE", "="+exe))
	if argv[0] != "scripts/build-images.sh" {
		t.Fatalf("fix %q is not scripts/build-images.sh", fix)
	}
	c := exec.Command("bash", append([]string{argv[0]}, append(argv[1:], "--dry-run")...)...)
	c.Dir = filepath.Join("..", "..")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s --dry-run: %v\n%s", cmd, err, out)
	}
	return string(out)
}
