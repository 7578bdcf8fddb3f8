package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// transcript is one sample from testdata/transcripts (copied from
// shared/reference/harness-transcripts) with what its sidecar says.
type transcript struct {
	name     string // file name
	harness  Name
	stdout   [][]byte
	exitCode int
	stderr   string
}

const transcriptDir = "testdata/transcripts"

// transcriptFiles lists the data files (not the .md sidecars).
func transcriptFiles(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(transcriptDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".jsonl", ".json", ".txt":
			out = append(out, e.Name())
		}
	}
	return out
}

// harnessOf maps a transcript file name to its harness by prefix
// ("cursor-task.jsonl" → cursor). ok is false for CLIs without an adapter.
func harnessOf(name string) (Name, bool) {
	prefix, _, _ := strings.Cut(name, "-")
	switch n := Name(prefix); n {
	case Claude, Codex, Gemini, Copilot, OpenCode, Qwen, Cursor, Aider:
		return n, true
	}
	return "", false
}

var (
	sidecarExit  = regexp.MustCompile("(?m)^- Exit code: `(-?\\d+)`")
	stdinLine    = []byte(">> ")
	exitLineRE   = regexp.MustCompile(`^## exit code (-?\d+)$`)
	shellCommand = []byte("$ ")
)

// loadTranscript reads a sample the way the CLI wrote it to stdout. The
// files record more than stdout, so:
//   - lines starting ">> " were written to the CLI's stdin: dropped;
//   - a "## exit code N" line records the exit code;
//   - shell transcripts (Aider, Cursor's error) start with "$ command"
//     (continued by trailing '\'); stdout runs until "$ echo $?", whose next
//     line is the exit code; what follows is commentary;
//   - "(stdout was empty)" and "(stdout: …)"-style lines describe output
//     rather than being output;
//   - a .json file is one JSON document that the CLI printed indented; it
//     is fed as one line, since Fetch reads every format line by line and
//     never asks for these single-document modes.
//
// The exit code comes from the sidecar when the data file has none.
func loadTranscript(t testing.TB, name string) transcript {
	t.Helper()
	h, _ := harnessOf(name)
	data, err := os.ReadFile(filepath.Join(transcriptDir, name))
	if err != nil {
		t.Fatal(err)
	}
	side, err := os.ReadFile(filepath.Join(transcriptDir, strings.TrimSuffix(name, filepath.Ext(name))+".md"))
	if err != nil {
		t.Fatalf("%s: sidecar: %v", name, err)
	}
	tr := transcript{name: name, harness: h, exitCode: -1, stderr: sidecarStderr(string(side))}
	if m := sidecarExit.FindSubmatch(side); m != nil {
		tr.exitCode, _ = strconv.Atoi(string(m[1]))
	}
	if filepath.Ext(name) == ".json" {
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr.stdout = [][]byte{b.Bytes()}
		return tr
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	shell := bytes.HasPrefix(data, shellCommand)
	continued, afterEcho, done := false, false, false
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		switch {
		case done:
		case continued:
			continued = bytes.HasSuffix(line, []byte(`\`))
		case afterEcho:
			tr.exitCode, _ = strconv.Atoi(string(bytes.TrimSpace(line)))
			done = true
		case shell && bytes.Equal(bytes.TrimSpace(line), []byte("$ echo $?")):
			afterEcho = true
		case shell && bytes.HasPrefix(line, shellCommand):
			continued = bytes.HasSuffix(line, []byte(`\`))
		case bytes.HasPrefix(line, stdinLine):
		case exitLineRE.Match(line):
			tr.exitCode, _ = strconv.Atoi(exitLineRE.FindStringSubmatch(string(line))[1])
		case bytes.HasPrefix(line, []byte("(stdout")), bytes.HasPrefix(line, []byte("(stderr")), bytes.HasPrefix(line, []byte("(exit code")):
		default:
			tr.stdout = append(tr.stdout, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if tr.exitCode == -1 {
		if code, ok := documentedExit[name]; ok {
			tr.exitCode = code
		} else {
			t.Fatalf("%s: no exit code in the sample or its sidecar", name)
		}
	}
	return tr
}

// documentedExit gives exit codes the samples only describe.
var documentedExit = map[string]int{
	// "exit code: non-zero" (reconstructed from Cursor's docs).
	"cursor-error.txt": 1,
	// Reconstructed successful runs; Cursor's docs: the stream ends with a
	// result on success, and failures exit non-zero.
	"cursor-task.jsonl":          0,
	"cursor-docs-example.jsonl":  0,
	"cursor-question-text.jsonl": 0,
	// A screen of the interactive TUI after a finished turn: no process
	// exit; 0 reads it as the turn it shows.
	"aider-tui-agentapi-fixture.txt": 0,
}

var sidecarStderrRE = regexp.MustCompile("(?s)stderr \\(verbatim[^\n]*\n+```\n(.*?)\n```")

// sidecarStderr returns the stderr a sidecar quotes, or "".
func sidecarStderr(side string) string {
	if m := sidecarStderrRE.FindStringSubmatch(side); m != nil {
		return m[1]
	}
	return ""
}

func TestLoadTranscriptShapes(t *testing.T) {
	tests := []struct {
		name      string
		exit      int
		lines     int
		firstLine string
	}{
		{"claude-question-askuserquestion-stdio.txt", 0, 8, `{"type":"control_response"`},
		{"aider-task.txt", 0, 21, "Aider v0.86.1"},
		{"gemini-error-auth-missing.txt", 41, 0, ""},
		{"cursor-error.txt", 1, 0, ""},
		{"gemini-task-json.json", 0, 1, `{"session_id":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := loadTranscript(t, tt.name)
			if tr.exitCode != tt.exit || len(tr.stdout) != tt.lines {
				t.Fatalf("exit %d with %d lines, want %d with %d", tr.exitCode, len(tr.stdout), tt.exit, tt.lines)
			}
			if tt.lines > 0 && !strings.HasPrefix(string(tr.stdout[0]), tt.firstLine) {
				t.Fatalf("first line %.60q, want prefix %q", tr.stdout[0], tt.firstLine)
			}
		})
	}
}
