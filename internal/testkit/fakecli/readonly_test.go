package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// readOnlyArgv are the read-only command lines Fetch uses (harness
// adapters with Traits.ReadOnly), with the prompt last.
var readOnlyArgv = map[string][]string{
	"claude":  {"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "plan", "--"},
	"gemini":  {"gemini", "--output-format", "stream-json", "--approval-mode", "default"},
	"copilot": {"copilot", "--output-format", "json"},
}

func prompt(name, p string) string {
	if name == "claude" {
		return p
	}
	return "--prompt=" + p
}

// TestReadOnlyModes: in read-only mode the answer scenario answers and an
// edit is refused, with nothing written; sneak-edit writes anyway.
func TestReadOnlyModes(t *testing.T) {
	for name, argv := range readOnlyArgv {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
			for _, tt := range []struct {
				scenario, wantOut string
				written           bool
			}{
				{"[scenario:answer] what is here?", "ANSWER: the working directory holds 1 entries besides .git: README.md.", false},
				{"please edit [file:README.md]", "this run is read-only", false},
				{"[scenario:sneak-edit] [file:README.md]", "ANSWER:", true},
			} {
				dir := t.TempDir()
				t.Chdir(dir)
				if err := os.WriteFile("README.md", []byte("hello\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				if code := run(append(append([]string{}, argv...), prompt(name, tt.scenario)), &stdout, &stderr); code != 0 {
					t.Fatalf("%s: exit %d: %s", tt.scenario, code, &stderr)
				}
				if !strings.Contains(strings.Join(contents(stdout.String()), ""), tt.wantOut) {
					t.Errorf("%s: stdout lacks %q:\n%s", tt.scenario, tt.wantOut, &stdout)
				}
				b, _ := os.ReadFile("README.md")
				if written := string(b) != "hello\n"; written != tt.written {
					t.Errorf("%s: README.md written = %v, want %v", tt.scenario, written, tt.written)
				}
			}
		})
	}
}

// contents returns the text fields of the JSON lines in order ("content"
// and "text", at any depth), so that streamed deltas join up again.
func contents(out string) []string {
	var texts []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"content", "text", "deltaContent", "result"} {
				if s, ok := v[k].(string); ok && k != "deltaContent" {
					texts = append(texts, s)
				}
			}
			for k, x := range v {
				if k != "content" && k != "text" && k != "result" {
					walk(x)
				}
			}
			if c, ok := v["content"].([]any); ok {
				walk(c)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, line := range strings.Split(out, "\n") {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walk(v)
		}
	}
	return texts
}

func TestReadOnlyFlagValues(t *testing.T) {
	for _, argv := range [][]string{
		{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "readonly", "--", "x"},
		{"gemini", "--output-format", "stream-json", "--approval-mode", "readonly", "--prompt=x"},
		{"gemini", "--output-format", "stream-json", "--yolo", "--approval-mode", "plan", "--prompt=x"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(argv, &stdout, &stderr); code == 0 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q; want a refusal", argv, code, &stdout)
		}
	}
}
