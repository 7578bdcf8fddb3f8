package harness

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readOnlyFlags are the read-only modes the adapters select, with the
// section of HARNESSES.md that confirms each.
var readOnlyFlags = map[Name][]string{
	Claude:  {"--permission-mode", "plan"},  // §2.2, denials §2.4
	Gemini:  {"--approval-mode", "default"}, // §4.2, gemini-default-approval-readonly
	Copilot: nil,                            // §5.2: no --allow-all-tools
}

// writeFlags are the flags that let a CLI write; a read-only run has none.
var writeFlags = []string{"--dangerously-skip-permissions", "--yolo", "--allow-all-tools", "--allow-all", "--dangerously-bypass-approvals-and-sandbox", "--force"}

func TestReadOnlyInvocation(t *testing.T) {
	reg := NewRegistry()
	for _, n := range reg.Names() {
		t.Run(string(n), func(t *testing.T) {
			a, _ := reg.Get(n)
			task := baseTask()
			task.ReadOnly = true
			inv, err := a.Invocation(task, nil)
			flags, offered := readOnlyFlags[n]
			if a.Traits().ReadOnly != offered {
				t.Fatalf("Traits().ReadOnly = %v, want %v", a.Traits().ReadOnly, offered)
			}
			if !offered {
				if !errors.Is(err, ErrNoReadOnly) {
					t.Fatalf("read-only invocation: %v, want ErrNoReadOnly", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range writeFlags {
				if slices.Contains(inv.Argv, f) {
					t.Errorf("read-only argv %q has %s", inv.Argv, f)
				}
			}
			if len(flags) > 0 {
				i := slices.Index(inv.Argv, flags[0])
				if i < 0 || i+1 >= len(inv.Argv) || inv.Argv[i+1] != flags[1] {
					t.Errorf("argv %q lacks %q", inv.Argv, flags)
				}
			}
			last := inv.Argv[len(inv.Argv)-1]
			if !strings.Contains(last, "This is a read-only run") || strings.Contains(last, "summary of what you changed") {
				t.Errorf("the prompt does not ask for an answer only: %q", last)
			}
		})
	}
}

// TestReadOnlyDeniedCommandIsNotReportedAsRun: in plan mode Claude Code
// reports a Bash call's denial only after its tool_use line, and Copilot
// without --allow-all-tools only in tool.execution_complete (a captured
// run of exactly that command line); in a read-only run the command comes
// out once, denied, never as started.
func TestReadOnlyDeniedCommandIsNotReportedAsRun(t *testing.T) {
	for _, tt := range []struct {
		a          Adapter
		transcript string
	}{
		{ClaudeAdapter{}, "claude-readonly-plan-denied.jsonl"},
		{CopilotAdapter{}, "copilot-permission-denied.jsonl"},
	} {
		t.Run(tt.transcript, func(t *testing.T) {
			g := replayAs(tt.a, loadTranscript(t, tt.transcript), Task{ID: "transcript-task", ReadOnly: true})
			var cmds []Event
			for _, ev := range g.Events {
				if ev.Kind == KindCommand {
					cmds = append(cmds, ev)
				}
			}
			if len(cmds) != 1 || !cmds[0].Denied || cmds[0].ExitCode != nil || cmds[0].Command != "python3 test_calc.py" {
				t.Fatalf("command events %+v, want one denied python3 test_calc.py", cmds)
			}
			if !g.Outcome.Success || g.Outcome.Summary == "" {
				t.Fatalf("outcome %+v", g.Outcome)
			}
		})
	}
}

func TestReadOnlyCommands(t *testing.T) {
	use := func(id, cmd string) string {
		return `{"type":"assistant","session_id":"s","message":{"id":"m-` + id + `","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"` + cmd + `"}}]}}`
	}
	res := func(id, text string, isErr bool) string {
		e := "false"
		if isErr {
			e = "true"
		}
		return `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + text + `","is_error":` + e + `}]}}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []Event
	}{
		{"allowed command is reported when it finished", []string{use("a", "ls"), res("a", "calc.py", false)},
			[]Event{{Kind: KindCommand, Tool: "Bash", ToolID: "a", Command: "ls"}, {Kind: KindCommand, Tool: "Bash", ToolID: "a", ExitCode: exitCode(0), Text: "calc.py"}}},
		{"failed command keeps its exit code", []string{use("b", "false"), res("b", "Exit code 1", true)},
			[]Event{{Kind: KindCommand, Tool: "Bash", ToolID: "b", Command: "false"}, {Kind: KindCommand, Tool: "Bash", ToolID: "b", ExitCode: exitCode(1), Text: "Exit code 1"}}},
		{"a refusal without an exit code is a denial", []string{use("c", "rm x"), res("c", "Plan mode is active", true)},
			[]Event{{Kind: KindCommand, Tool: "Bash", ToolID: "c", Command: "rm x", Denied: true, Text: "Plan mode is active"}}},
		{"a denial listed only in the result", []string{use("d", "touch x"), `{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Bash","tool_use_id":"d"}]}`},
			[]Event{{Kind: KindCommand, Tool: "Bash", ToolID: "d", Command: "touch x", Denied: true, Text: "permission denied"}, {Kind: KindResult, Success: true, Text: "done"}}},
		{"a command the run never answered is reported as started", []string{use("e", "sleep 9")},
			[]Event{{Kind: KindCommand, Tool: "Bash", ToolID: "e", Command: "sleep 9"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			for _, ev := range parseAll(ClaudeAdapter{}.NewParser(Task{ReadOnly: true}), tt.lines...) {
				if ev.Kind != KindSession {
					got = append(got, ev)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQwenUsageWithoutResult: a Qwen run that ends without a result line
// (exit 53 at its turn limit) keeps the usage of its assistant messages,
// counted once per message id; a result line's usage replaces the sum.
func TestQwenUsageWithoutResult(t *testing.T) {
	g := replay(QwenAdapter{}, loadTranscript(t, "qwen-turn-limit.jsonl"))
	if want := (Usage{InputTokens: 5400, OutputTokens: 150, CostUnknown: true}); g.Outcome.Usage != want { // no Qwen price in internal/price
		t.Fatalf("usage %+v, want %+v", g.Outcome.Usage, want)
	}
	if g.Outcome.Success || g.Outcome.ExitCode != 53 {
		t.Fatalf("outcome %+v", g.Outcome)
	}
	msg := func(id string, in int) string {
		return `{"type":"assistant","session_id":"s","message":{"id":"` + id + `","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":` + strings.Repeat("1", in) + `,"output_tokens":1}}}`
	}
	sum := func(lines ...string) Usage {
		var u Usage
		for _, ev := range parseAll(QwenAdapter{}.NewParser(Task{}), lines...) {
			if ev.Kind == KindUsage {
				u = u.Add(*ev.Usage)
			}
		}
		return u
	}
	// The same message on two lines (one per content block) counts once.
	if got, want := sum(msg("m1", 2), msg("m1", 2), msg("m2", 3)), (Usage{InputTokens: 11 + 111, OutputTokens: 2, CostUnknown: true}); got != want {
		t.Errorf("usage %+v, want %+v", got, want)
	}
	result := `{"type":"result","subtype":"success","is_error":false,"result":"ok","usage":{"input_tokens":500,"output_tokens":7}}`
	if got, want := sum(msg("m1", 2), result), (Usage{InputTokens: 500, OutputTokens: 7, CostUnknown: true}); got != want {
		t.Errorf("with a result: usage %+v, want %+v", got, want)
	}
	// Claude Code always ends with a result; its messages are not summed.
	if evs := parseAll(ClaudeAdapter{}.NewParser(Task{}), msg("m1", 2)); slices.ContainsFunc(evs, func(ev Event) bool { return ev.Kind == KindUsage }) {
		t.Errorf("claude summed message usage: %+v", evs)
	}
}

func TestTaskUsage(t *testing.T) {
	first := Usage{InputTokens: 2100, OutputTokens: 60, CostUSD: 0.01}
	// codex-resume.jsonl: the resumed turn reports the thread's whole usage.
	resumed := Usage{InputTokens: 4200, OutputTokens: 120, CostUSD: 0.02}
	tests := []struct {
		scope   UsageScope
		run     Usage
		resumed bool
		want    Usage
	}{
		{UsagePerRun, resumed, true, first.Add(resumed)},
		{UsageCumulative, resumed, true, resumed},
		{UsageCumulative, Usage{}, true, first},
		{UsageCumulative, resumed, false, first.Add(resumed)},
	}
	for _, tt := range tests {
		if got := TaskUsage(tt.scope, first, tt.run, tt.resumed); got != tt.want {
			t.Errorf("TaskUsage(%s, resumed %v) = %+v, want %+v", tt.scope, tt.resumed, got, tt.want)
		}
	}
	for _, n := range NewRegistry().Names() {
		a, _ := NewRegistry().Get(n)
		want := UsagePerRun
		if n == Codex || n == Qwen {
			want = UsageCumulative
		}
		if got := a.Traits().ResumeUsage; got != want {
			t.Errorf("%s: ResumeUsage %q, want %q", n, got, want)
		}
	}
}
