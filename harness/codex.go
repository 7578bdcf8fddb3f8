package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CodexVersion is the Codex CLI release the adapter targets.
const CodexVersion = "0.169.0"

// Environment variables Codex reads.
const (
	envOpenAIAPIKey = "OPENAI_API_KEY"
	envCodexAPIKey  = "CODEX_API_KEY"
)

// CodexAdapter drives the Codex CLI (`codex exec --json`).
//
// Codex's own landlock/seccomp sandbox fails inside containers, sometimes
// with exit 0, so the adapter passes --dangerously-bypass-approvals-and-sandbox:
// the kennel is the sandbox. Resuming runs `codex exec resume <thread> <answer>`.
//
// Two-way (TwoWay, codex_appserver.go), it runs `codex app-server`: the
// thread asks before commands and patches, and may ask the user questions.
type CodexAdapter struct{}

// Name implements Adapter.
func (CodexAdapter) Name() Name { return Codex }

// Version implements Adapter.
func (CodexAdapter) Version() string { return CodexVersion }

// Invocation implements Adapter.
func (CodexAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: codex invocation: %w", err)
	}
	if task.ReadOnly {
		return Invocation{}, readOnlyUnsupported(Codex)
	}
	argv := []string{"codex", "exec"}
	if task.ResumeID != "" {
		argv = append(argv, "resume")
	}
	argv = append(argv, "--json", "--dangerously-bypass-approvals-and-sandbox")
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	argv = append(argv, "--")
	if task.ResumeID != "" {
		argv = append(argv, task.ResumeID)
	}
	argv = append(argv, Prompt(task))
	env := buildEnv(nil, creds, keyNames(CodexAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter.
func (CodexAdapter) Keys() []Key {
	return []Key{{envOpenAIAPIKey, true}, {envCodexAPIKey, true}, {envOpenAIBaseURL, false}}
}

// Traits implements Adapter.
//
// Codex is not offered for read-only tasks. Its read-only mode is its own
// sandbox (-s read-only), which is the landlock/seccomp sandbox that fails
// inside containers (HARNESSES.md §3.2): the shell commands Codex reads
// files with would fail, sometimes with exit 0. Without the sandbox nothing
// refuses writes: `codex exec` 0.169 has no -a/--ask-for-approval, and its
// approval policy is effectively "never" (§3.2).
//
// A resumed thread (`codex exec resume`) reports the whole thread's usage
// in turn.completed (codex-resume.jsonl: 4200 input tokens after a first
// turn of 2100); so does a resumed app-server thread
// (thread/tokenUsage/updated's total), which the two-way parser reports.
func (CodexAdapter) Traits() Traits {
	return Traits{ResumeUsage: UsageCumulative, TwoWay: true, Steer: SteerInline, Relays: []Kind{KindPermission, KindAsk}}
}

// NewParser implements Adapter.
//
// Codex's stream names no model, so its tokens are priced by the task's
// model (Task.Model) when one is set; with the CLI's default model the
// cost is unknown. Its usage comes only with turn.completed, at the end of
// the run (codex-task.jsonl): a Codex run cannot be stopped at a budget
// before it ends.
func (CodexAdapter) NewParser(t Task) Parser {
	return &formatOr{rpc: isCodexAppLine, twoWay: newCodexAppParser(t), otherwise: &codexParser{seen: make(map[string]bool), model: t.Model}}
}

// codexParser reads `codex exec --json` (the thread/turn/item schema of
// 0.169; the older {"msg":…} protocol events are not supported and come out
// as raw events).
type codexParser struct {
	session  string
	lastText string
	seen     map[string]bool // item ids already reported as started
	model    string
}

type codexLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     *codexItem      `json:"item"`
	Usage    *codexUsage     `json:"usage"`
	Error    json.RawMessage `json:"error"`
	Message  string          `json:"message"`
	// request_user_input
	Questions json.RawMessage `json:"questions"`
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Message          string          `json:"message"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          []codexChange   `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Query            string          `json:"query"`
	Error            json.RawMessage `json:"error"`
}

type codexChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

type codexUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
}

// Codex line and item types that carry nothing for the event model.
var (
	codexIgnored     = map[string]bool{"turn.started": true, "item.plan.delta": true}
	codexIgnoredItem = map[string]bool{"reasoning": true, "todo_list": true, "plan": true}
)

// Parse implements Parser.
func (p *codexParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		emit(rawEvent(line))
		return
	}
	switch l.Type {
	case "thread.started":
		if l.ThreadID != "" && l.ThreadID != p.session {
			p.session = l.ThreadID
			emit(Event{Kind: KindSession, SessionID: l.ThreadID})
		}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			emit(rawEvent(line))
			return
		}
		p.item(l.Type == "item.completed", *l.Item, line, emit)
	case "turn.completed":
		if l.Usage != nil {
			u := Usage{
				InputTokens:      l.Usage.InputTokens,
				OutputTokens:     l.Usage.OutputTokens,
				CacheReadTokens:  l.Usage.CachedInputTokens,
				CacheWriteTokens: l.Usage.CacheWriteInputTokens,
			}
			u = withPrice(u, codexModel(p.model), true)
			emit(Event{Kind: KindUsage, Usage: &u})
		}
		emit(Event{Kind: KindResult, Success: true, Text: p.lastText})
	case "turn.failed":
		msg := errorMessage(l.Error)
		if msg == "" {
			msg = "turn failed"
		}
		emit(Event{Kind: KindResult, Text: capText(msg)})
	case "error":
		emit(Event{Kind: KindError, Text: capText(l.Message)})
	case "request_user_input":
		emit(Event{Kind: KindQuestion, Text: questionsText(l.Questions)})
	default:
		if !codexIgnored[l.Type] {
			emit(rawEvent(line))
		}
	}
}

// Flush implements Parser.
func (p *codexParser) Flush(func(Event)) {}

func (p *codexParser) item(completed bool, it codexItem, line []byte, emit func(Event)) {
	first := !p.seen[it.ID]
	p.seen[it.ID] = true
	switch it.Type {
	case "agent_message":
		if completed && strings.TrimSpace(it.Text) != "" {
			p.lastText = capText(it.Text)
			emit(Event{Kind: KindText, Text: p.lastText})
		}
	case "command_execution":
		switch {
		case completed && it.Status == "declined":
			emit(Event{Kind: KindError, Tool: "command_execution", ToolID: it.ID, Text: "command declined: " + it.Command})
		case completed:
			ev := Event{Kind: KindCommand, Tool: "command_execution", ToolID: it.ID, Command: it.Command, ExitCode: it.ExitCode, Text: capText(it.AggregatedOutput)}
			if ev.ExitCode == nil && it.Status == "failed" {
				ev.ExitCode = exitCode(-1)
			}
			emit(ev)
		case first:
			emit(Event{Kind: KindCommand, Tool: "command_execution", ToolID: it.ID, Command: it.Command})
		}
	case "file_change":
		if first {
			input, _ := json.Marshal(map[string]any{"changes": it.Changes})
			emit(Event{Kind: KindToolUse, Tool: "apply_patch", ToolID: it.ID, Input: capInput(input)})
		}
		if completed && it.Status == "completed" {
			for _, c := range it.Changes {
				emit(Event{Kind: KindFileChanged, Tool: "apply_patch", ToolID: it.ID, Path: c.Path, Change: codexChangeKind(c.Kind)})
			}
		}
		if completed && it.Status == "failed" {
			emit(Event{Kind: KindError, Tool: "apply_patch", ToolID: it.ID, Text: "patch failed"})
		}
	case "mcp_tool_call":
		if first {
			emit(Event{Kind: KindToolUse, Tool: it.Server + "/" + it.Tool, ToolID: it.ID, Input: capInput(it.Arguments)})
		}
		if completed && it.Status == "failed" {
			emit(Event{Kind: KindError, Tool: it.Server + "/" + it.Tool, ToolID: it.ID, Text: capText(errorMessage(it.Error))})
		}
	case "web_search":
		if first {
			input, _ := json.Marshal(map[string]string{"query": it.Query})
			emit(Event{Kind: KindToolUse, Tool: "web_search", ToolID: it.ID, Input: input})
		}
	case "collab_tool_call":
		if first {
			emit(Event{Kind: KindToolUse, Tool: it.Tool, ToolID: it.ID})
		}
	case "error":
		emit(Event{Kind: KindError, Text: capText(it.Message)})
	default:
		if !codexIgnoredItem[it.Type] {
			emit(rawEvent(line))
		}
	}
}

func codexChangeKind(kind string) ChangeKind {
	switch kind {
	case "add":
		return ChangeAdded
	case "delete":
		return ChangeDeleted
	case "update":
		return ChangeModified
	}
	return ""
}

// questionsText renders a list of questions given as strings or as objects
// with a "question" (or "text", "prompt") field.
func questionsText(raw json.RawMessage) string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return capText(jsonString(raw))
	}
	var out []string
	for _, it := range items {
		var q struct {
			Question string `json:"question"`
			Text     string `json:"text"`
			Prompt   string `json:"prompt"`
		}
		switch {
		case json.Unmarshal(it, &q) == nil && q.Question != "":
			out = append(out, q.Question)
		case q.Text != "":
			out = append(out, q.Text)
		case q.Prompt != "":
			out = append(out, q.Prompt)
		default:
			out = append(out, jsonString(it))
		}
	}
	return capText(strings.Join(out, "\n"))
}
