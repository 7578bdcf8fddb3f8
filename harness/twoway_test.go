package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stdinLines returns what a transcript records as written to the CLI's
// stdin (the lines starting ">> ").
func stdinLines(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(transcriptDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), stdinLine); ok {
			out = append(out, bytes.Clone(rest))
		}
	}
	return out
}

// sameJSON reports whether a and b are the same JSON value (the captured
// driver wrote Python's spacing; the CLI reads JSON, not bytes).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func parseLines(a Adapter, lines [][]byte) []Event {
	var evs []Event
	p := a.NewParser(transcriptTask)
	for _, l := range lines {
		p.Parse(l, func(ev Event) { evs = append(evs, ev) })
	}
	p.Flush(func(ev Event) { evs = append(evs, ev) })
	return evs
}

// TestClaudeAnswerMatchesTranscript: the reply Fetch writes to the captured
// AskUserQuestion request is the reply the captured driver wrote, which
// Claude Code 2.1.197 accepted ("Your questions have been answered: …").
func TestClaudeAnswerMatchesTranscript(t *testing.T) {
	const name = "claude-question-askuserquestion-stdio.txt"
	tr := loadTranscript(t, name)
	var ask *Request
	for _, ev := range parseLines(ClaudeAdapter{}, tr.stdout) {
		if ev.Kind == KindAsk {
			ask = ev.Request
		}
	}
	if ask == nil {
		t.Fatal("no ask event")
	}
	want := []Question{{Question: "Should add() also accept floats, or only integers?", Header: "Number types",
		Options: []Option{{"Integers only", "Keep int-only semantics"}, {"Ints and floats", "Accept any numeric type"}}}}
	if diff := cmp.Diff(want, ask.Questions); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	in := stdinLines(t, name)
	if len(in) != 3 {
		t.Fatalf("%d stdin lines, want initialize, the prompt and the answer", len(in))
	}
	got, err := ClaudeAdapter{}.Answer(*ask, []string{"Integers only"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got, []byte("\n")) || bytes.Count(got, []byte("\n")) != 1 {
		t.Errorf("reply is not one line: %q", got)
	}
	if !sameJSON(t, got, in[2]) {
		t.Errorf("answer\n%s\nwant (transcript)\n%s", got, in[2])
	}

	// The opening: initialize, then the prompt as a user message.
	task := Task{ID: "t1", Goal: "Make add() more flexible.", Workspace: "/workspace"}
	open, err := ClaudeAdapter{}.Opening(task, ModeWork)
	if err != nil || len(open) != 2 {
		t.Fatalf("opening %q, %v", open, err)
	}
	var init, capturedInit map[string]any
	_ = json.Unmarshal(open[0], &init)
	_ = json.Unmarshal(in[0], &capturedInit)
	init["request_id"], capturedInit["request_id"] = "", ""
	if !reflect.DeepEqual(init, capturedInit) {
		t.Errorf("initialize %s, want (transcript) %s", open[0], in[0])
	}
	var msg map[string]any
	_ = json.Unmarshal(open[1], &msg)
	content := msg["message"].(map[string]any)["content"].(string)
	if !strings.HasPrefix(content, task.Goal+"\n\n") || !strings.Contains(content, "AskUserQuestion") {
		t.Errorf("prompt %q", content)
	}
	msg["message"].(map[string]any)["content"] = task.Goal
	b, _ := json.Marshal(msg)
	if !sameJSON(t, b, in[1]) {
		t.Errorf("user message %s, want (transcript) %s", open[1], in[1])
	}
}

// TestClaudeInterruptMatchesTranscript: the interrupt Fetch writes is the
// one claude-cancel-interrupt-control.txt wrote, which ended the run.
func TestClaudeInterruptMatchesTranscript(t *testing.T) {
	in := stdinLines(t, "claude-cancel-interrupt-control.txt")
	got, err := ClaudeAdapter{}.Interrupt("req_interrupt_1")
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, got, in[1]) {
		t.Errorf("interrupt %s, want (transcript) %s", got, in[1])
	}
	// The user message of the same transcript.
	msg, _ := ClaudeAdapter{}.UserMessage("Run the full test suite")
	if !sameJSON(t, msg, in[0]) {
		t.Errorf("user message %s, want (transcript) %s", msg, in[0])
	}
	if _, err := (ClaudeAdapter{}).Interrupt("-x"); err == nil {
		t.Error("an interrupt id starting with '-' was accepted")
	}
}

// twoWayCase is one request line of testdata/twoway/requests.jsonl with
// its events and Fetch's replies.
type twoWayCase struct {
	Line    int             `json:"line"`
	Events  []Event         `json:"events"`
	Allow   json.RawMessage `json:"allow,omitempty"`
	Deny    json.RawMessage `json:"deny,omitempty"`
	Stop    json.RawMessage `json:"deny_and_stop,omitempty"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Refused []string        `json:"refused,omitempty"` // replies that fail, with their errors
}

// TestTwoWayGolden parses every request of testdata/twoway (see its
// README for what each rests on) and writes each reply Fetch can make;
// refresh with -update.
func TestTwoWayGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "twoway", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a := ClaudeAdapter{}
	var cases []twoWayCase
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		c := twoWayCase{Line: i + 1, Events: parseLines(a, [][]byte{line})}
		for _, ev := range c.Events {
			if ev.Request == nil {
				t.Errorf("line %d: %s event without a request", i+1, ev.Kind)
				continue
			}
			r := *ev.Request
			if ev.Kind == KindRequestCancelled {
				continue // the CLI waits for no reply
			}
			reply := func(dst *json.RawMessage, what string, b []byte, err error) {
				switch {
				case err != nil:
					if !errors.Is(err, ErrCannotReply) {
						t.Errorf("line %d: %s: %v does not wrap ErrCannotReply", i+1, what, err)
					}
					c.Refused = append(c.Refused, what+": "+err.Error())
				case !json.Valid(b) || !bytes.HasSuffix(b, []byte("\n")):
					t.Errorf("line %d: %s is not one JSON line: %q", i+1, what, b)
				default:
					*dst = json.RawMessage(bytes.TrimSpace(b))
				}
			}
			b, err := a.Allow(r)
			reply(&c.Allow, "allow", b, err)
			b, err = a.Deny(r, "Not now: use a pull request instead.")
			reply(&c.Deny, "deny", b, err)
			b, err = a.DenyAndStop(r, "")
			reply(&c.Stop, "deny_and_stop", b, err)
			if ev.Kind == KindAsk {
				answers := make([]string, len(r.Questions))
				for j, q := range r.Questions {
					answers[j] = q.Options[0].Label
				}
				b, err = a.Answer(r, answers)
				reply(&c.Answer, "answer", b, err)
			}
			// A request with an id is always answerable with a denial.
			if r.ID != "" && (c.Deny == nil || c.Stop == nil) {
				t.Errorf("line %d: request %s cannot be denied", i+1, r.ID)
			}
			if ev.Kind == KindBadRequest && c.Allow != nil {
				t.Errorf("line %d: a bad request can be allowed", i+1)
			}
		}
		if len(c.Events) != 1 {
			t.Errorf("line %d: %d events, want 1", i+1, len(c.Events))
		}
		cases = append(cases, c)
	}
	b, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "twoway", "replies.json")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	exp, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./harness -run TestTwoWayGolden -update)", err)
	}
	if diff := cmp.Diff(string(exp), string(b)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

func TestTwoWayRequestFields(t *testing.T) {
	data, _ := os.ReadFile(filepath.Join("testdata", "twoway", "requests.jsonl"))
	evs := parseLines(ClaudeAdapter{}, bytes.Split(bytes.TrimSpace(data), []byte("\n")))
	kinds := make([]Kind, len(evs))
	for i, ev := range evs {
		kinds[i] = ev.Kind
	}
	want := []Kind{KindPermission, KindPermission, KindPermission, KindPermission, KindPlan,
		KindBadRequest, KindBadRequest, KindBadRequest, KindBadRequest, KindBadRequest, KindBadRequest,
		KindRequestCancelled, KindBadRequest}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if r := evs[0].Request; r.Command != "git push --force" || r.Tool != "Bash" || r.ToolUseID != "toolu_01aa" {
		t.Errorf("bash request %+v", r)
	}
	if r := evs[1].Request; r.Path != "/workspace/calc.py" || r.Diff != "-    return a - b\n+    return a + b" {
		t.Errorf("edit request %+v", r)
	}
	if r := evs[3].Request; r.Diff != "-a - b\n+a + b\n-def sub\n+def subtract" {
		t.Errorf("multiedit diff %q", r.Diff)
	}
	if r := evs[4].Request; !strings.HasPrefix(r.Plan, "1. Change add()") {
		t.Errorf("plan %q", r.Plan)
	}
	if evs[9].Request.ID != "" || evs[10].Request.ID != "" {
		t.Error("a request without a usable id got one")
	}
}

// TestTwoWayRepeatedRequestFingerprint: the same tool call asked again
// has the same fingerprint; another command has another.
func TestTwoWayRepeatedRequestFingerprint(t *testing.T) {
	line := func(id, cmd string) []byte {
		return []byte(`{"type":"control_request","request_id":"` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"` + cmd + `"}}}`)
	}
	evs := parseLines(ClaudeAdapter{}, [][]byte{line("a", "rm -rf /"), line("b", "rm -rf /"), line("c", "ls")})
	if evs[0].Request.Fingerprint != evs[1].Request.Fingerprint || evs[0].Request.Fingerprint == evs[2].Request.Fingerprint {
		t.Fatalf("fingerprints %s %s %s", evs[0].Request.Fingerprint, evs[1].Request.Fingerprint, evs[2].Request.Fingerprint)
	}
}

// TestTwoWayPlanFromFile: an ExitPlanMode without a plan in its input
// shows the plan file written before it.
func TestTwoWayPlanFromFile(t *testing.T) {
	write := []byte(`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"tu1","name":"Write","input":{"file_path":"/home/u/.claude/plans/p.md","content":"# Plan\n1. do it"}}]}}`)
	exit := []byte(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"ExitPlanMode","input":{}}}`)
	evs := parseLines(ClaudeAdapter{}, [][]byte{write, exit})
	last := evs[len(evs)-1]
	if last.Kind != KindPlan || last.Request.Plan != "# Plan\n1. do it" {
		t.Fatalf("last event %+v", last)
	}
}

func TestTwoWayTraits(t *testing.T) {
	reg := NewRegistry()
	for _, n := range reg.Names() {
		a, _ := reg.Get(n)
		_, ok := a.(TwoWay)
		if a.Traits().TwoWay != ok {
			t.Errorf("%s: Traits.TwoWay %v, implements TwoWay %v", n, a.Traits().TwoWay, ok)
		}
	}
	inv, err := ClaudeAdapter{}.TwoWayInvocation(Task{ID: "t", Goal: "g", Workspace: "/w", ResumeID: "abc-1"}, ModePlan, Credentials{"ANTHROPIC_API_KEY": "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio", "--permission-mode", "plan", "--resume", "abc-1"}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv %q, want %q", inv.Argv, want)
	}
	if slices.Contains(inv.Argv, "--dangerously-skip-permissions") || slices.Contains(inv.Argv, "g") {
		t.Errorf("argv %q skips permissions or carries the goal", inv.Argv)
	}
}
