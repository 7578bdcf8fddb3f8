package harness

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is what testdata/golden/<transcript>.json holds.
type golden struct {
	Harness  Name    `json:"harness"`
	Version  string  `json:"version"`
	ExitCode int     `json:"exit_code"`
	Events   []Event `json:"events"`
	Outcome  Outcome `json:"outcome"`
}

// replay parses a transcript the way Run parses a live run.
func replay(a Adapter, tr transcript) golden { return replayAs(a, tr, taskOf(tr.name)) }

// replayAs parses a transcript as the run of task.
func replayAs(a Adapter, tr transcript, task Task) golden {
	g := golden{Harness: a.Name(), Version: a.Version(), ExitCode: tr.exitCode, Events: []Event{}}
	s := newStream(a.NewParser(task), func(ev Event) { g.Events = append(g.Events, ev) })
	for _, line := range tr.stdout {
		s.line(line)
	}
	s.flush()
	g.Outcome = s.tally.outcome(end{exitCode: tr.exitCode, stderrTail: tr.stderr})
	return g
}

// TestGolden parses every transcript that belongs to an adapter and compares
// the events and outcome with testdata/golden. Refresh with -update.
func TestGolden(t *testing.T) {
	reg := NewRegistry()
	covered := make(map[Name]int)
	want := make(map[string]bool)
	for _, name := range transcriptFiles(t) {
		h, ok := harnessOf(name)
		if !ok {
			t.Errorf("%s: belongs to no adapter", name)
			continue
		}
		covered[h]++
		goldenName := name + ".json"
		want[goldenName] = true
		t.Run(name, func(t *testing.T) {
			a, err := reg.Get(h)
			if err != nil {
				t.Fatal(err)
			}
			got := replay(a, loadTranscript(t, name))
			path := filepath.Join("testdata", "golden", goldenName)
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			if *update {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./harness -run TestGolden -update)", err)
			}
			if diff := cmp.Diff(string(exp), string(b)); diff != "" {
				t.Errorf("%s differs (-golden +got):\n%s", path, diff)
			}
		})
	}
	for _, n := range reg.Names() {
		if covered[n] == 0 {
			t.Errorf("no transcript for adapter %s", n)
		}
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("stale golden file %s has no transcript", e.Name())
		}
	}
}

// expectation is what a transcript's sidecar says about the run, written by
// hand so that the golden files cannot silently drift.
type expectation struct {
	success  bool
	session  string
	question string // a substring of the question; "" means none
	usage    bool   // some usage was reported
	files    []string
	errorHas string // a substring of Outcome.Error
}

var expectations = map[string]expectation{
	"claude-task.jsonl":                         {success: true, session: "ce4bc407-c5c7-4338-bef6-7363feb9bb92", usage: true, files: []string{"/workspace/calc.py"}},
	"claude-task-partial.jsonl":                 {success: true, session: "b8f13e97-ddf5-4819-bd46-3457592a6df1", usage: true, files: []string{"/workspace/calc.py"}},
	"claude-task-json.json":                     {success: true, session: "d6a26b68-57ea-4423-b836-454ff93acfd3", usage: true},
	"claude-question-text.jsonl":                {success: true, session: "ec1d435f-acfa-4932-8b2c-54520ce203f6", usage: true, question: "only integers?"},
	"claude-question-askuserquestion-stdio.txt": {success: true, session: "80b4fc93-f1d8-4c23-9fc1-bfe7d5bee86f", usage: true},
	"claude-permission-denied.jsonl":            {success: true, session: "f29fba0c-8c06-4235-9455-608c293e13ff", usage: true},
	"claude-readonly-plan-denied.jsonl":         {success: true, session: "5b0e7f7a-9d1c-4c55-8e2a-3f6d2c1a9e41", usage: true},
	"claude-error-auth-missing.jsonl":           {session: "a705dc7e-1055-47e6-a71a-e35e38ea9a73", errorHas: "Not logged in"},
	"claude-error-401.jsonl":                    {session: "7b859323-a4e2-494a-be8c-0565a9ab6523", errorHas: "Invalid API key"},
	"claude-error-429.jsonl":                    {session: "8f1fbca2-26c8-40c4-863d-da24440a1dd8", errorHas: "429"},
	"claude-error-max-turns.jsonl":              {session: "65adf27f-bf2f-4b5e-abaf-268a439ad7ee", usage: true, files: []string{"/workspace/calc.py"}, errorHas: "maximum number of turns"},
	"claude-cancel-sigint.jsonl":                {session: "64c10864-b45c-4e71-92d7-0cdc0103efe5", usage: true},
	"claude-cancel-sigterm.jsonl":               {success: true, session: "0c1b46b3-0729-4629-a7eb-95114eea18da", usage: true},
	"claude-cancel-interrupt-control.txt":       {session: "a0c15d09-2078-476a-9bc0-4a82f9156518", usage: true},

	"codex-task.jsonl":                        {success: true, session: "01a20323-0ce7-74a2-88c4-94d0a334ca55", usage: true, files: []string{"/workspace/calc.py"}},
	"codex-question-text.jsonl":               {success: true, session: "01a20323-29a1-7030-868a-9291f2d12f8e", usage: true, question: "only integers?"},
	"codex-question-request-user-input.jsonl": {success: true, session: "01a20323-1b1c-7a83-b7d4-929722cd3c2d", usage: true},
	"codex-resume.jsonl":                      {success: true, session: "01a20325-484d-7960-98bd-c0e488048000", usage: true, question: "only integers?"},
	"codex-error-401.jsonl":                   {session: "01a20323-2b47-7341-96f0-2f356f4130c6", errorHas: "401 Unauthorized"},
	"codex-error-429.jsonl":                   {session: "01a20323-43e9-76a1-99d5-b0fd42817763", errorHas: "429"},
	"codex-error-500.jsonl":                   {session: "01a20323-452a-77c1-8984-68f76797d4e2", errorHas: "high demand"},
	"codex-error-no-auth-no-network.jsonl":    {session: "01a20323-b49e-7252-9bbb-bb7a20dd85fd", errorHas: "waiting for network"},
	"codex-cancel-sigint.jsonl":               {session: "01a20324-ff24-7990-a0fe-306df3061d0f"},

	"gemini-task.jsonl":                      {success: true, session: "506cad20-3d83-4ff6-acea-6db013e0d66f", usage: true, files: []string{"/workspace/calc.py"}},
	"gemini-task-json.json":                  {success: true, session: "299a7464-080b-4e8d-aee7-e56d5310e625", usage: true},
	"gemini-question-text.jsonl":             {success: true, session: "0b2b36ff-8bb4-4ed8-91aa-b922937bed36", usage: true, question: "only integers?"},
	"gemini-default-approval-readonly.jsonl": {success: true, session: "c2f1c009-aeac-4ab1-b165-3a2b623ad779", usage: true},
	"gemini-error-401.jsonl":                 {session: "d19d41aa-5508-42f5-9277-91e7ab044bc4", errorHas: "API key not valid"},
	"gemini-error-429-retrying.jsonl":        {session: "cb4e3e9f-766b-4c9f-8daf-e39998665ae9", errorHas: "429"},
	"gemini-error-max-turns.jsonl":           {session: "e62cbcb3-e2ab-450a-b536-9ef78e66f5e2", usage: true, files: []string{"/workspace/calc.py"}, errorHas: "max session turns"},
	"gemini-error-auth-missing.txt":          {errorHas: "GEMINI_API_KEY"},
	"gemini-error-untrusted-folder.txt":      {errorHas: "trusted directory"},
	"gemini-cancel-sigint.jsonl":             {session: "2261e76b-28af-49a9-83ab-5ca084d6b7cc"},

	"copilot-task.jsonl":              {success: true, session: "4d8d3efd-8dfa-4f92-be4a-8f77b6d382ad", files: []string{"/workspace/calc.py"}},
	"copilot-question-text.jsonl":     {success: true, session: "88c64026-e1dc-4d2e-9cf7-1583e8daad68", question: "only integers?"},
	"copilot-permission-denied.jsonl": {success: true, session: "f0437dcd-0ee2-420c-a76d-c0a890e3c7c7"},
	"copilot-error-401.jsonl":         {session: "d8a3c9fc-26f6-40b0-bd74-148391abe892", errorHas: "HTTP 401"},
	"copilot-error-429.jsonl":         {session: "af029d28-fc6f-43fa-bf2e-7687d481d189", errorHas: "429"},
	"copilot-error-auth-missing.txt":  {errorHas: "exited with code 1"},
	"copilot-cancel-sigint.jsonl":     {session: "52dac3b7-45b3-4bfe-bcd2-5a1c1f1f032a", files: []string{"/workspace/calc.py"}, errorHas: "exited with code 130"},

	"opencode-task.jsonl":                {success: true, session: "ses_dfcce8285ffePAf3BhEWxrFupo", usage: true, files: []string{"/workspace/calc.py"}},
	"opencode-question-text.jsonl":       {success: true, session: "ses_dfcce636ffferA8cEfkTn3G76M", usage: true, question: "only integers?"},
	"opencode-permission-rejected.jsonl": {session: "ses_dfccd3c5fffenhYmjq6JKrLHnV", usage: true, errorHas: "auto-rejecting"},
	"opencode-error-401.jsonl":           {session: "ses_dfcce56fbffe0L51viKYKl4vsI", errorHas: "invalid x-api-key (HTTP 401)"},
	"opencode-error-429.jsonl":           {session: "ses_dfcce4b27ffe4Bcninwbrl3SIN", errorHas: "rate limit (HTTP 429)"},
	"opencode-error-auth-missing.jsonl":  {session: "ses_dfccd2134ffe5vNMyaZp61OKjV", errorHas: "Unexpected server error"},

	"qwen-task.jsonl":               {success: true, session: "d6e5137f-476e-48fe-a356-fb2bede185e9", usage: true, files: []string{"/workspace/calc.py"}},
	"qwen-error-401.jsonl":          {session: "785fed07-f8e9-447c-b85c-bb9f543d7d75", errorHas: "[API Error: 401"},
	"qwen-error-auth-missing.jsonl": {session: "b754f7d2-2645-4717-a838-f9028af5105b", errorHas: "No auth type"},
	"qwen-turn-limit.jsonl":         {session: "0f3a9c2e-7b14-4d8a-9e61-2c5b7d8e9f10", usage: true, files: []string{"/workspace/calc.py"}, errorHas: "exited with code 53"},

	"cursor-task.jsonl":          {success: true, session: "c6b62c6f-7ead-4fd6-9922-e952131177ff", files: []string{"/workspace/calc.py"}},
	"cursor-docs-example.jsonl":  {success: true, session: "c6b62c6f-7ead-4fd6-9922-e952131177ff", files: []string{"/Users/user/project/summary.txt"}},
	"cursor-question-text.jsonl": {success: true, session: "3f1c9a52-2b7e-4d1a-9c0e-8a4b5e6f7a10", question: "only integers?"},
	"cursor-error.txt":           {errorHas: "exited with code 1"},

	"aider-task.txt":                 {success: true, session: "transcript-task", usage: true, files: []string{"calc.py"}},
	"aider-question-and-prompts.txt": {success: true, session: "transcript-task", usage: true, question: "only integers?"},
	"aider-tui-agentapi-fixture.txt": {success: true, session: "transcript-task", usage: true},
}

// TestTranscriptFacts checks, per transcript, the facts its sidecar states:
// success, session id, question, usage, files named by the CLI, error.
func TestTranscriptFacts(t *testing.T) {
	reg := NewRegistry()
	seen := make(map[string]bool)
	for _, name := range transcriptFiles(t) {
		h, ok := harnessOf(name)
		if !ok {
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := expectations[name]
			if !ok {
				t.Fatal("no expectation written for this transcript")
			}
			a, _ := reg.Get(h)
			g := replay(a, loadTranscript(t, name))
			o := g.Outcome
			if o.Success != want.success {
				t.Errorf("success = %v, want %v (error %q)", o.Success, want.success, o.Error)
			}
			if o.SessionID != want.session {
				t.Errorf("session = %q, want %q", o.SessionID, want.session)
			}
			switch {
			case want.question == "" && o.Question != "":
				t.Errorf("question = %q, want none", o.Question)
			case !strings.Contains(o.Question, want.question):
				t.Errorf("question = %q, want it to contain %q", o.Question, want.question)
			}
			if !o.Usage.IsZero() != want.usage {
				t.Errorf("usage = %+v, want reported: %v", o.Usage, want.usage)
			}
			var files []string
			for _, ev := range g.Events {
				if ev.Kind == KindFileChanged {
					files = append(files, ev.Path)
				}
			}
			if diff := cmp.Diff(want.files, files); diff != "" {
				t.Errorf("files changed (-want +got):\n%s", diff)
			}
			if want.success && o.Summary == "" {
				t.Error("successful run without a summary")
			}
			if !strings.Contains(o.Error, want.errorHas) || (want.errorHas == "" && !want.success && o.Error == "") {
				t.Errorf("error = %q, want it to contain %q", o.Error, want.errorHas)
			}
			for _, ev := range g.Events {
				if ev.Kind == "" {
					t.Errorf("event without a kind: %+v", ev)
				}
			}
		})
	}
	for name := range expectations {
		if !seen[name] {
			t.Errorf("expectation for missing transcript %s", name)
		}
	}
}

// transcriptTask is the task a transcript is replayed as.
var transcriptTask = Task{ID: "transcript-task"}

// taskOf is the task a transcript is replayed as: a read-only one for the
// runs of read-only tasks ("-readonly-" in the name).
func taskOf(name string) Task {
	t := transcriptTask
	t.ReadOnly = strings.Contains(name, "-readonly-")
	return t
}
