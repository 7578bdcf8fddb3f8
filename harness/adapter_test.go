package harness

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// metaGoal is a goal full of shell metacharacters, quotes, flag look-alikes
// and a newline; it must reach the CLI as part of one argv element.
const metaGoal = `--model=evil -- '; rm -rf / #" $(touch /tmp/pwned) ` + "`id`" + ` && echo $HOME | tee x > y < z; \n
second line with 'single' "double" \back\slash * ? [a] {b} ~ ! % ^ & ( ) é 😀`

func baseTask() Task {
	return Task{ID: "task-1", Goal: "Fix the failing test", Workspace: "/srv/ws/demo"}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	want := []Name{Aider, Claude, Codex, Copilot, Cursor, Gemini, OpenCode, Qwen}
	if diff := cmp.Diff(want, r.Names()); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	for _, n := range want {
		a, err := r.Get(n)
		if err != nil || a.Name() != n || a.Version() == "" {
			t.Errorf("%s: adapter %v, err %v", n, a, err)
		}
	}
	if _, err := r.Get("amp"); !errors.Is(err, ErrUnknownHarness) {
		t.Fatalf("amp: err %v, want ErrUnknownHarness", err)
	}
}

// promptElements returns the indexes of argv elements that carry the prompt
// or, for goals long enough to be distinctive, any of the goal.
func promptElements(argv []string, prompt, goal string) []int {
	var idx []int
	for i, a := range argv {
		if strings.Contains(a, prompt) || (len(goal) > 8 && strings.Contains(a, goal)) {
			idx = append(idx, i)
		}
	}
	return idx
}

func TestGoalIsOneArgvElement(t *testing.T) {
	for _, n := range NewRegistry().Names() {
		a, _ := NewRegistry().Get(n)
		for _, goal := range []string{metaGoal, "-starts-with-a-dash and --help", "--"} {
			t.Run(string(n), func(t *testing.T) {
				task := baseTask()
				task.Goal = goal
				inv, err := a.Invocation(task, nil)
				if err != nil {
					t.Fatal(err)
				}
				idx := promptElements(inv.Argv, Prompt(task), goal)
				if len(idx) != 1 || idx[0] != len(inv.Argv)-1 {
					t.Fatalf("goal in elements %v of %q, want exactly the last", idx, inv.Argv)
				}
				last := inv.Argv[len(inv.Argv)-1]
				prompt := Prompt(task)
				if !strings.HasPrefix(prompt, goal) {
					t.Fatalf("prompt does not start with the goal: %q", prompt)
				}
				switch {
				case last == prompt:
					// Positional: it must follow "--" so it is never a flag.
					if inv.Argv[len(inv.Argv)-2] != "--" {
						t.Fatalf("positional prompt not after --: %q", inv.Argv)
					}
				case strings.HasPrefix(last, "--") && strings.Contains(last, "="):
					// --option=value: the value is the whole rest.
					_, v, _ := strings.Cut(last, "=")
					if v != prompt {
						t.Fatalf("option value %q, want the prompt", v)
					}
				default:
					t.Fatalf("prompt element %q is neither positional nor --option=value", last)
				}
				if i := slices.Index(inv.Argv, "--"); i >= 0 && i < len(inv.Argv)-3 {
					t.Fatalf("-- too early in %q", inv.Argv)
				}
			})
		}
	}
}

func TestInvocation(t *testing.T) {
	task := baseTask()
	task.Model = "m-1"
	resumed := task
	resumed.ResumeID = "sess-9"
	resumed.Answer = "Integers only."
	p := Prompt(task)
	tests := []struct {
		name Name
		task Task
		want []string
	}{
		{Claude, task, []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model", "m-1", "--", p}},
		{Claude, resumed, []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--model", "m-1", "--resume", "sess-9", "--", "Integers only."}},
		{Codex, task, []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--model", "m-1", "--", p}},
		{Codex, resumed, []string{"codex", "exec", "resume", "--json", "--dangerously-bypass-approvals-and-sandbox", "--model", "m-1", "--", "sess-9", "Integers only."}},
		{Gemini, resumed, []string{"gemini", "--output-format", "stream-json", "--yolo", "--model", "m-1", "--resume", "sess-9", "--prompt=Integers only."}},
		{Copilot, resumed, []string{"copilot", "--output-format", "json", "--allow-all-tools", "--model", "m-1", "--resume=sess-9", "--prompt=Integers only."}},
		{OpenCode, resumed, []string{"opencode", "run", "--format", "json", "--model", "m-1", "--session", "sess-9", "--", "Integers only."}},
		{OpenCode, baseTask(), []string{"opencode", "run", "--format", "json", "--model", OpenCodeDefaultModel, "--", p}},
		{Qwen, resumed, []string{"qwen", "--output-format", "stream-json", "--yolo", "--model", "m-1", "--resume", "sess-9", "--prompt=Integers only."}},
		{Cursor, resumed, []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust", "--model", "m-1", "--resume", "sess-9", "--", "Integers only."}},
		{Aider, resumed, []string{"aider", "--yes-always", "--no-stream", "--no-pretty", "--no-fancy-input", "--no-auto-commits", "--no-gitignore",
			"--no-check-update", "--no-show-release-notes", "--no-show-model-warnings", "--analytics-disable",
			"--chat-history-file=/tmp/fetch-aider-sess-9.chat.md", "--input-history-file=/tmp/fetch-aider-sess-9.input.md",
			"--model=m-1", "--restore-chat-history", "--message=Integers only."}},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			a, _ := NewRegistry().Get(tt.name)
			inv, err := a.Invocation(tt.task, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, inv.Argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidTasks(t *testing.T) {
	mod := func(f func(*Task)) Task { t := baseTask(); f(&t); return t }
	tests := map[string]Task{
		"empty goal":        mod(func(t *Task) { t.Goal = "  " }),
		"bad id":            mod(func(t *Task) { t.ID = "../x" }),
		"relative ws":       mod(func(t *Task) { t.Workspace = "ws" }),
		"relative workdir":  mod(func(t *Task) { t.Workdir = "ws/wt" }),
		"flag model":        mod(func(t *Task) { t.Model = "--yolo" }),
		"flag resume id":    mod(func(t *Task) { t.ResumeID = "-x"; t.Answer = "a" }),
		"NUL in goal":       mod(func(t *Task) { t.Goal = "a\x00b" }),
		"resume, no prompt": mod(func(t *Task) { t.ResumeID = "s"; t.Goal = "" }),
	}
	for name, task := range tests {
		for _, n := range NewRegistry().Names() {
			a, _ := NewRegistry().Get(n)
			if _, err := a.Invocation(task, nil); !errors.Is(err, ErrInvalidTask) {
				t.Errorf("%s, %s: err %v, want ErrInvalidTask", name, n, err)
			}
		}
	}
}

// allCredentials holds every key any adapter reads, plus secrets that must
// never reach a kennel.
var allCredentials = Credentials{
	"FETCH_DISCORD_TOKEN": "discord-secret", "OPENROUTER_API_KEY": "or-secret", "GITHUB_TOKEN": "gh-pr-secret",
	"ANTHROPIC_API_KEY": "a", "CLAUDE_CODE_OAUTH_TOKEN": "a", "ANTHROPIC_AUTH_TOKEN": "a", "ANTHROPIC_BASE_URL": "a",
	"OPENAI_API_KEY": "o", "CODEX_API_KEY": "o", "OPENAI_BASE_URL": "o", "OPENAI_MODEL": "o", "DASHSCOPE_API_KEY": "q",
	"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "g", "GOOGLE_GEMINI_BASE_URL": "g", "GOOGLE_GENAI_USE_VERTEXAI": "g",
	"GOOGLE_CLOUD_PROJECT": "g", "GOOGLE_CLOUD_LOCATION": "g", "GOOGLE_GENERATIVE_AI_API_KEY": "g",
	"COPILOT_GITHUB_TOKEN": "c", "GH_TOKEN": "c", "COPILOT_PROVIDER_BASE_URL": "c", "COPILOT_PROVIDER_TYPE": "c",
	"COPILOT_PROVIDER_API_KEY": "c", "COPILOT_PROVIDER_BEARER_TOKEN": "c", "COPILOT_PROVIDER_WIRE_API": "c",
	"COPILOT_MODEL": "c", "COPILOT_OFFLINE": "c",
	"CURSOR_API_KEY": "cu", "OPENCODE_CONFIG_CONTENT": "{}", "DEEPSEEK_API_KEY": "d",
}

func TestEnvHoldsOnlyOwnCredentials(t *testing.T) {
	common := []string{"NO_COLOR"}
	tests := []struct {
		name  Name
		model string
		want  []string
	}{
		{Claude, "", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_OAUTH_TOKEN", "DISABLE_AUTOUPDATER", "IS_SANDBOX"}},
		{Codex, "", []string{"CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}},
		{Gemini, "", []string{"GEMINI_API_KEY", "GEMINI_CLI_NO_RELAUNCH", "GEMINI_CLI_TRUST_WORKSPACE", "GOOGLE_API_KEY", "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"}},
		{Copilot, "", []string{"COPILOT_AUTO_UPDATE", "COPILOT_GITHUB_TOKEN", "COPILOT_MODEL", "COPILOT_OFFLINE", "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_WIRE_API", "GH_TOKEN"}},
		{OpenCode, "", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_AUTOUPDATE"}},
		{OpenCode, "openai/gpt-5.5", []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_AUTOUPDATE"}},
		{OpenCode, "openrouter/anthropic/claude", []string{"OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_AUTOUPDATE"}},
		{Qwen, "", []string{"DASHSCOPE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"}},
		{Cursor, "", []string{"CURSOR_API_KEY"}},
		{Aider, "", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}},
		{Aider, "deepseek/deepseek-chat", []string{"DEEPSEEK_API_KEY"}},
		{Aider, "gemini/gemini-2.5-pro", []string{"GEMINI_API_KEY"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.name)+"/"+tt.model, func(t *testing.T) {
			a, _ := NewRegistry().Get(tt.name)
			task := baseTask()
			task.Model = tt.model
			inv, err := a.Invocation(task, allCredentials)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, kv := range inv.Env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || v == "" {
					t.Errorf("malformed env entry %q", kv)
				}
				if strings.Contains(v, "secret") {
					t.Errorf("%s leaks into the kennel", k)
				}
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := slices.Concat(tt.want, common)
			sort.Strings(want)
			if diff := cmp.Diff(want, keys); diff != "" {
				t.Errorf("env keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvWithoutCredentials(t *testing.T) {
	for _, n := range NewRegistry().Names() {
		a, _ := NewRegistry().Get(n)
		inv, err := a.Invocation(baseTask(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range inv.Env {
			if strings.Contains(kv, "KEY") || strings.Contains(kv, "TOKEN") {
				t.Errorf("%s: %q without credentials", n, kv)
			}
		}
	}
}

func TestCheckModel(t *testing.T) {
	for _, c := range []struct {
		cli   Name
		model string
		ok    bool
	}{
		{Claude, "", true}, {Claude, "opus", true}, {Claude, "claude-sonnet-4-5-20250929", true},
		{Claude, "gpt-5.5", false}, {Codex, "gpt-5.5", true}, {Codex, "opus", false},
		{OpenCode, "anthropic/claude-sonnet-4-5", true}, {OpenCode, "sonnet", false},
		{Claude, "--dangerous", false}, {Claude, "opus; rm -rf /", false}, {Cursor, "anything-1", true},
	} {
		err := CheckModel(c.cli, c.model)
		if (err == nil) != c.ok {
			t.Errorf("CheckModel(%s, %q) = %v; want ok=%v", c.cli, c.model, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidTask) {
			t.Errorf("CheckModel(%s, %q): %v does not wrap ErrInvalidTask", c.cli, c.model, err)
		}
	}
	err := CheckModel(Claude, "gpt-5.5")
	if err == nil || !strings.Contains(err.Error(), "sonnet, opus") {
		t.Errorf("the error does not name what claude takes: %v", err)
	}
}
