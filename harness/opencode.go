package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// OpenCodeVersion is the OpenCode release the adapter targets.
const OpenCodeVersion = "1.18.33"

// Environment variables OpenCode reads besides the provider keys.
const envOpenCodeConfigContent = "OPENCODE_CONFIG_CONTENT"

// OpenCodeDefaultModel is used when the task names none: without -m an
// offline OpenCode hangs fetching its model catalogue.
const OpenCodeDefaultModel = "anthropic/claude-sonnet-4-5"

// OpenCodeAdapter drives OpenCode (`opencode run --format json`).
//
// OpenCode has no terminal event: a run succeeded when the process exits 0
// and the last step_finish has reason "stop". It ignores SIGINT in run mode;
// the kennel's stop escalates to SIGTERM. It gets the credentials of its
// model's provider only, plus OPENCODE_CONFIG_CONTENT.
//
// Two-way (TwoWay, acp.go), it runs `opencode acp`, OpenCode's Agent
// Client Protocol agent (opencode.ai/docs/cli/acp: newline-delimited
// JSON-RPC on stdio, protocol version 1; it runs until stdin closes).
// `opencode acp` takes no model flag, and OpenCode allows edits and shell
// commands without asking by default (HARNESSES.md §6.2), so the run's
// OPENCODE_CONFIG_CONTENT is the owner's with "model" set and the edit,
// bash and webfetch permissions set to "ask" (an owner's "deny" stays):
// then OpenCode asks session/request_permission before each. That the
// "ask" rules reach the ACP client as permission requests is from
// OpenCode's documentation and source, not from a run observed here.
type OpenCodeAdapter struct{ acpTwoWay }

// TwoWayInvocation implements TwoWay.
func (a OpenCodeAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := a.checkMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: opencode two-way invocation: %w", err)
	}
	model := task.Model
	if model == "" {
		model = OpenCodeDefaultModel
	}
	cfg, err := openCodeACPConfig(creds[envOpenCodeConfigContent], model)
	if err != nil {
		return Invocation{}, fmt.Errorf("harness: opencode two-way invocation: %w", err)
	}
	env := buildEnv([]string{"OPENCODE_DISABLE_AUTOUPDATE=1", envOpenCodeConfigContent + "=" + cfg}, creds, providerEnv[providerOf(model)]...)
	return Invocation{Argv: []string{"opencode", "acp"}, Env: env}, nil
}

// openCodeAsk are the permissions a two-way run sets to "ask".
var openCodeAsk = []string{"bash", "edit", "webfetch"}

// openCodeACPConfig is the configuration of a two-way run: the owner's
// (a JSON object, or empty) with model and the ask permissions.
func openCodeACPConfig(owner, model string) (string, error) {
	cfg := map[string]any{}
	if strings.TrimSpace(owner) != "" {
		if err := json.Unmarshal([]byte(owner), &cfg); err != nil || cfg == nil {
			return "", fmt.Errorf("%w: %s is not a JSON object", ErrInvalidTask, envOpenCodeConfigContent)
		}
	}
	cfg["model"] = model
	perm, _ := cfg["permission"].(map[string]any)
	if perm == nil {
		perm = map[string]any{}
	}
	for _, k := range openCodeAsk {
		if perm[k] != "deny" {
			perm[k] = "ask"
		}
	}
	cfg["permission"] = perm
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("%s: %w", envOpenCodeConfigContent, err)
	}
	return string(b), nil
}

// Name implements Adapter.
func (OpenCodeAdapter) Name() Name { return OpenCode }

// Version implements Adapter.
func (OpenCodeAdapter) Version() string { return OpenCodeVersion }

// Invocation implements Adapter.
func (OpenCodeAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: opencode invocation: %w", err)
	}
	if task.ReadOnly {
		return Invocation{}, readOnlyUnsupported(OpenCode)
	}
	model := task.Model
	if model == "" {
		model = OpenCodeDefaultModel
	}
	argv := []string{"opencode", "run", "--format", "json", "--model", model}
	if task.ResumeID != "" {
		argv = append(argv, "--session", task.ResumeID)
	}
	argv = append(argv, "--", Prompt(task))
	keys := append([]string{envOpenCodeConfigContent}, providerEnv[providerOf(model)]...)
	env := buildEnv([]string{"OPENCODE_DISABLE_AUTOUPDATE=1"}, creds, keys...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter: its configuration and every provider's keys
// (a run gets its model's provider's only).
func (OpenCodeAdapter) Keys() []Key {
	return append([]Key{{envOpenCodeConfigContent, true}}, providerKeys()...)
}

// Traits implements Adapter. No read-only mode is offered: HARNESSES.md §6.2 lists --agent plan but did not run it, and
// the observed way to refuse edits (a permission set to "ask" in the
// configuration) stops the run at the first refusal.
func (OpenCodeAdapter) Traits() Traits {
	return acpTraits(Traits{ResumeUsage: UsagePerRun})
}

// NewParser implements Adapter.
func (OpenCodeAdapter) NewParser(task Task) Parser {
	return &formatOr{rpc: isACP, twoWay: newACPParser(task), otherwise: &openCodeParser{}}
}

// openCodeParser reads `opencode run --format json`.
type openCodeParser struct {
	session    string
	lastText   string
	lastReason string
	failure    string
}

type openCodeLine struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Part      *openCodePart   `json:"part"`
	Error     json.RawMessage `json:"error"`
}

type openCodePart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Tool   string `json:"tool"`
	CallID string `json:"callID"`
	State  *struct {
		Status   string          `json:"status"`
		Input    json.RawMessage `json:"input"`
		Output   string          `json:"output"`
		Error    string          `json:"error"`
		Metadata json.RawMessage `json:"metadata"`
	} `json:"state"`
	Reason string `json:"reason"`
	Tokens *struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
		Cache  struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Cost float64 `json:"cost"`
}

var openCodeEdits = map[string]bool{"edit": true, "write": true, "patch": true, "multiedit": true}

// Parse implements Parser.
func (p *openCodeParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	var l openCodeLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		emit(rawEvent(line))
		return
	}
	if l.SessionID != "" && l.SessionID != p.session {
		p.session = l.SessionID
		emit(Event{Kind: KindSession, SessionID: l.SessionID})
	}
	switch {
	case l.Type == "step_start":
	case l.Type == "text" && l.Part != nil:
		if strings.TrimSpace(l.Part.Text) != "" {
			p.lastText = capText(l.Part.Text)
			emit(Event{Kind: KindText, Text: p.lastText})
		}
	case l.Type == "tool_use" && l.Part != nil && l.Part.State != nil:
		p.tool(*l.Part, emit)
	case l.Type == "step_finish" && l.Part != nil:
		p.lastReason = l.Part.Reason
		if t := l.Part.Tokens; t != nil || l.Part.Cost != 0 {
			u := Usage{CostUSD: l.Part.Cost}
			if t != nil {
				u.InputTokens, u.OutputTokens = t.Input, t.Output
				u.CacheReadTokens, u.CacheWriteTokens = t.Cache.Read, t.Cache.Write
			}
			emit(Event{Kind: KindUsage, Usage: &u})
		}
	case l.Type == "error":
		p.failure = openCodeError(l.Error)
		emit(Event{Kind: KindError, Text: p.failure})
	default:
		emit(rawEvent(line))
	}
}

// Flush implements Parser: OpenCode's end of stream is its terminal event.
func (p *openCodeParser) Flush(emit func(Event)) {
	switch {
	case p.failure != "":
		emit(Event{Kind: KindResult, Text: p.failure})
	case p.lastReason == "stop":
		emit(Event{Kind: KindResult, Success: true, Text: p.lastText})
	}
}

func (p *openCodeParser) tool(part openCodePart, emit func(Event)) {
	st := part.State
	var input map[string]json.RawMessage
	_ = json.Unmarshal(st.Input, &input) // tools without object input are still tool uses
	if part.Tool == "bash" {
		var meta struct {
			Exit *int `json:"exit"`
		}
		_ = json.Unmarshal(st.Metadata, &meta) // no metadata: exit code unknown
		ev := Event{Kind: KindCommand, Tool: part.Tool, ToolID: part.CallID, Command: jsonString(input["command"]), ExitCode: meta.Exit, Text: capText(st.Output)}
		emit(ev)
		if st.Status == "error" {
			emit(Event{Kind: KindError, Tool: part.Tool, ToolID: part.CallID, Text: capText(st.Error)})
		}
		return
	}
	emit(Event{Kind: KindToolUse, Tool: part.Tool, ToolID: part.CallID, Input: capInput(st.Input)})
	switch {
	case st.Status == "error":
		emit(Event{Kind: KindError, Tool: part.Tool, ToolID: part.CallID, Text: capText(st.Error)})
	case st.Status == "completed" && openCodeEdits[part.Tool]:
		if path := jsonString(input["filePath"]); path != "" {
			emit(Event{Kind: KindFileChanged, Tool: part.Tool, ToolID: part.CallID, Path: path})
		}
	}
}

// openCodeError reads {"name", "data":{"message", "statusCode"}}.
func openCodeError(raw json.RawMessage) string {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return capText(jsonString(raw))
	}
	msg := e.Data.Message
	if msg == "" {
		msg = e.Name
	}
	if e.Data.StatusCode != 0 {
		msg = fmt.Sprintf("%s (HTTP %d)", msg, e.Data.StatusCode)
	}
	if msg == "" {
		msg = "unknown error"
	}
	return capText(msg)
}
