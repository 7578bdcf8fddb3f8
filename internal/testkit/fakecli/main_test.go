package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel/shim"
)

func TestUnknownFlagsAreUsageErrors(t *testing.T) {
	for _, name := range cliNames() {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"/usr/local/bin/" + name, "--no-such-flag"}, &stdout, &stderr); code != 2 {
			t.Errorf("%s: exit %d, want 2; stderr %s", name, code, &stderr)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: wrote to stdout on a usage error: %s", name, &stdout)
		}
	}
}

func TestUnknownProgramName(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"amp"}, &stdout, &stderr); code != 127 {
		t.Fatalf("exit %d, want 127", code)
	}
}

func TestParseScenario(t *testing.T) {
	tests := map[string]scenario{
		"just do it":                          {"success", -1, defaultFile, 0},
		"x [scenario:fail:7] y":               {"fail", 7, defaultFile, 0},
		"[scenario:huge] [file:docs/out.txt]": {"huge", -1, "docs/out.txt", 0},
		"[scenario:ignore-int]":               {"ignore-int", -1, defaultFile, 0},
		"[scenario:spend:60] [every:1500ms]":  {"spend", 60, defaultFile, 1500 * time.Millisecond},
	}
	for prompt, want := range tests {
		if got := parseScenario(prompt); got != want {
			t.Errorf("%q: %+v, want %+v", prompt, got, want)
		}
	}
}

func TestRecordsArgv(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	goal := `it's "quoted" $(x) [file:out.txt]`
	argv := []string{"codex", "exec", "--json", "--", goal}
	var stdout, stderr bytes.Buffer
	if code := run(argv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	line, _, _ := strings.Cut(stderr.String(), "\n")
	var got []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "fakecli: argv ")), &got); err != nil {
		t.Fatal(err)
	}
	if got[len(got)-1] != goal {
		t.Fatalf("recorded %q", got)
	}
	b, err := os.ReadFile(filepath.Join(".", "out.txt"))
	if err != nil || !strings.Contains(string(b), "fake codex was here") {
		t.Fatalf("edit: %q, %v", b, err)
	}
}

func TestEditStaysInWorkingDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run([]string{"cursor-agent", "-p", "--output-format", "stream-json", "--", "[file:../escape.txt]"}, &stdout, &stderr)
	if code == 0 {
		t.Fatalf("edit outside the working directory succeeded: %s", &stdout)
	}
}

// TestForgedRecordPrefixIsTheShims: the forge-record scenario forges what
// the shim really writes.
func TestForgedRecordPrefixIsTheShims(t *testing.T) {
	if forgedRecordPrefix != shim.RecordedPrefix {
		t.Fatalf("forgedRecordPrefix %q, the shim writes %q", forgedRecordPrefix, shim.RecordedPrefix)
	}
}
