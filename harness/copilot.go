package harness

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CopilotVersion is the GitHub Copilot CLI release the adapter targets.
const CopilotVersion = "1.0.102"

// Environment variables Copilot CLI reads: a GitHub token with Copilot
// access, or a bring-your-own-key provider. GITHUB_TOKEN is deliberately not
// passed: in Fetch it is the token for pull requests, not Copilot's.
const (
	envCopilotGitHubToken   = "COPILOT_GITHUB_TOKEN"
	envGHToken              = "GH_TOKEN"
	envCopilotProviderURL   = "COPILOT_PROVIDER_BASE_URL"
	envCopilotProviderType  = "COPILOT_PROVIDER_TYPE"
	envCopilotProviderKey   = "COPILOT_PROVIDER_API_KEY"
	envCopilotProviderToken = "COPILOT_PROVIDER_BEARER_TOKEN"
	envCopilotProviderWire  = "COPILOT_PROVIDER_WIRE_API"
	envCopilotModel         = "COPILOT_MODEL"
	envCopilotOffline       = "COPILOT_OFFLINE"
)

// CopilotAdapter drives GitHub Copilot CLI (`copilot -p … --output-format
// json --allow-all-tools`). COPILOT_AUTO_UPDATE=false, or it updates itself
// outside CI. The npm launcher spawns a native child that survives a signal
// to the launcher alone; the kennel signals the whole process group.
//
// A read-only task runs without --allow-all-tools: view is allowed, and
// apply_patch and bash fail with error.code "denied" (HARNESSES.md §5.2,
// observed in copilot-permission-denied.jsonl).
//
// Two-way (TwoWay, acp.go), it runs `copilot --acp --stdio`, Copilot CLI's
// Agent Client Protocol server (GitHub's "Copilot CLI ACP server"
// reference; public preview), without --allow-all-tools, so it asks
// session/request_permission before a tool its permissions do not allow.
// The model goes in COPILOT_MODEL (`copilot help environment`): ACP's
// session/new carries none. Known quirks, from the CLI's issue tracker,
// not observed here: its permission requests name a fixed tool call id
// ("shell-permission", "write-permission"; github/copilot-cli#989), which
// the fingerprint leaves out anyway; and some releases (1.0.81-1 on,
// github/copilot-cli#4537, open) run tools in ACP mode without asking at
// all, so there the kennel is the only boundary.
type CopilotAdapter struct{ acpTwoWay }

// Traits implements Adapter.
func (CopilotAdapter) Traits() Traits {
	return acpTraits(Traits{ReadOnly: true, ResumeUsage: UsagePerRun})
}

// TwoWayInvocation implements TwoWay.
func (a CopilotAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := a.checkMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: copilot two-way invocation: %w", err)
	}
	if task.Model != "" {
		creds = maps.Clone(creds)
		if creds == nil {
			creds = Credentials{}
		}
		creds[envCopilotModel] = task.Model
	}
	env := buildEnv([]string{"COPILOT_AUTO_UPDATE=false"}, creds, keyNames(CopilotAdapter{}.Keys())...)
	return Invocation{Argv: []string{"copilot", "--acp", "--stdio"}, Env: env}, nil
}

// Name implements Adapter.
func (CopilotAdapter) Name() Name { return Copilot }

// Version implements Adapter.
func (CopilotAdapter) Version() string { return CopilotVersion }

// Invocation implements Adapter.
func (CopilotAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: copilot invocation: %w", err)
	}
	argv := []string{"copilot", "--output-format", "json"}
	if !task.ReadOnly {
		argv = append(argv, "--allow-all-tools")
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume="+task.ResumeID)
	}
	// --prompt=… keeps a prompt that starts with '-' from being read as a flag.
	argv = append(argv, "--prompt="+Prompt(task))
	env := buildEnv([]string{"COPILOT_AUTO_UPDATE=false"}, creds, keyNames(CopilotAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter.
func (CopilotAdapter) Keys() []Key {
	return []Key{
		{envCopilotGitHubToken, true}, {envGHToken, true},
		{envCopilotProviderURL, false}, {envCopilotProviderType, false}, {envCopilotProviderKey, true}, {envCopilotProviderToken, true},
		{envCopilotProviderWire, false}, {envCopilotModel, false}, {envCopilotOffline, false},
	}
}

// NewParser implements Adapter.
func (CopilotAdapter) NewParser(task Task) Parser {
	return &formatOr{rpc: isACP, twoWay: newACPParser(task),
		otherwise: &copilotParser{tools: make(map[string]copilotTool), readOnly: task.ReadOnly}}
}

// copilotParser reads Copilot CLI's JSONL: {"type","data",…} envelopes and
// a different terminal line {"type":"result","sessionId","exitCode","usage"}.
type copilotParser struct {
	tools        map[string]copilotTool // by toolCallId
	lastText     string
	sessionError string
	// readOnly: the run has no --allow-all-tools, so bash is denied, but
	// only in tool.execution_complete. A shell command's start is held
	// back until then, so that a denied command is never shown as run.
	readOnly bool
}

// copilotTool is a tool call waiting for its completion.
type copilotTool struct {
	name    string
	command string
	held    bool
}

// copilotDenied is error.code of a tool Copilot refused
// (copilot-permission-denied.jsonl).
const copilotDenied = "denied"

type copilotLine struct {
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	SessionID string          `json:"sessionId"`
	ExitCode  *int            `json:"exitCode"`
	Usage     *struct {
		PremiumRequests float64 `json:"premiumRequests"`
	} `json:"usage"`
}

type copilotData struct {
	Content    string          `json:"content"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments"`
	Success    *bool           `json:"success"`
	FileEdits  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"fileEdits"`
	ShellExecution *struct {
		ExitCode *int `json:"exitCode"`
	} `json:"shellExecution"`
	Result *struct {
		Content string `json:"content"`
	} `json:"result"`
	Error     json.RawMessage `json:"error"`
	ErrorType string          `json:"errorType"`
	Message   string          `json:"message"`
	Reason    string          `json:"reason"`
}

// Copilot event types that carry nothing for the event model: startup
// notices, lifecycle markers, deltas that the full assistant.message
// repeats, partial tool output, and background task bookkeeping.
var copilotIgnored = map[string]bool{
	"session.skills_loaded":            true,
	"session.mcp_servers_loaded":       true,
	"session.tools_updated":            true,
	"session.background_tasks_changed": true,
	"session.info":                     true,
	"user.message":                     true,
	"assistant.turn_start":             true,
	"assistant.turn_end":               true,
	"assistant.message_start":          true,
	"assistant.message_delta":          true,
	"assistant.tool_call_delta":        true,
	"assistant.idle":                   true,
	"model.call_start":                 true,
	"model.call_finished":              true,
	"model.call_final_result":          true,
	"model.call_failure":               true,
	"tool.execution_partial_result":    true,
	"tool.shell_output":                true,
}

const copilotShellTool = "bash"

// Parse implements Parser.
func (p *copilotParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	var l copilotLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		emit(rawEvent(line))
		return
	}
	if copilotIgnored[l.Type] {
		return
	}
	if l.Type == "result" {
		p.result(l, emit)
		return
	}
	var d copilotData
	if len(l.Data) > 0 && json.Unmarshal(l.Data, &d) != nil {
		emit(rawEvent(line))
		return
	}
	switch l.Type {
	case "assistant.message":
		if strings.TrimSpace(d.Content) != "" {
			p.lastText = capText(d.Content)
			emit(Event{Kind: KindText, Text: p.lastText})
		}
	case "assistant.turn_retry":
		emit(Event{Kind: KindError, Text: "model call failed (" + d.Reason + "); retrying"})
	case "tool.execution_start":
		p.tools[d.ToolCallID] = copilotTool{name: d.ToolName}
		if d.ToolName == copilotShellTool {
			var args struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(d.Arguments, &args) // no command is still a command event
			p.tools[d.ToolCallID] = copilotTool{name: d.ToolName, command: args.Command, held: p.readOnly}
			if !p.readOnly {
				emit(Event{Kind: KindCommand, Tool: d.ToolName, ToolID: d.ToolCallID, Command: args.Command})
			}
			return
		}
		input := d.Arguments
		if len(input) > 0 && input[0] == '"' { // custom tools (apply_patch) take free text
			input, _ = json.Marshal(map[string]string{"input": jsonString(input)})
		}
		emit(Event{Kind: KindToolUse, Tool: d.ToolName, ToolID: d.ToolCallID, Input: capInput(input)})
	case "tool.execution_complete":
		p.complete(d, emit)
	case "session.error":
		p.sessionError = d.Message
		emit(Event{Kind: KindError, Text: capText(d.Message)})
	default:
		emit(rawEvent(line))
	}
}

// Flush implements Parser. Commands still held back never completed (the
// run ended first): they are reported as started, since they may have run.
func (p *copilotParser) Flush(emit func(Event)) {
	var ids []string
	for id, t := range p.tools {
		if t.held {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		emit(Event{Kind: KindCommand, Tool: p.tools[id].name, ToolID: id, Command: p.tools[id].command})
	}
}

func (p *copilotParser) complete(d copilotData, emit func(Event)) {
	t := p.tools[d.ToolCallID]
	name := t.name
	delete(p.tools, d.ToolCallID)
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(d.Error, &e) // a string or no error is not a denial
	denied := d.Success != nil && !*d.Success && e.Code == copilotDenied
	switch {
	case denied && name == copilotShellTool:
		emit(Event{Kind: KindCommand, Tool: name, ToolID: d.ToolCallID, Command: t.command, Denied: true, Text: capText(errorMessage(d.Error))})
		return
	case denied:
		emit(Event{Kind: KindError, Tool: name, ToolID: d.ToolCallID, Denied: true, Text: capText(errorMessage(d.Error))})
		return
	case t.held:
		emit(Event{Kind: KindCommand, Tool: name, ToolID: d.ToolCallID, Command: t.command})
	}
	for _, f := range d.FileEdits {
		emit(Event{Kind: KindFileChanged, Tool: name, ToolID: d.ToolCallID, Path: f.Path, Change: copilotChangeKind(f.Kind)})
	}
	if d.ShellExecution != nil && d.ShellExecution.ExitCode != nil {
		out := ""
		if d.Result != nil {
			out = d.Result.Content
		}
		emit(Event{Kind: KindCommand, Tool: name, ToolID: d.ToolCallID, ExitCode: d.ShellExecution.ExitCode, Text: capText(out)})
		return
	}
	if d.Success != nil && !*d.Success {
		msg := errorMessage(d.Error)
		if msg == "" {
			msg = "tool failed"
		}
		emit(Event{Kind: KindError, Tool: name, ToolID: d.ToolCallID, Text: capText(msg)})
	}
}

func (p *copilotParser) result(l copilotLine, emit func(Event)) {
	if l.SessionID != "" {
		emit(Event{Kind: KindSession, SessionID: l.SessionID})
	}
	if l.Usage != nil && l.Usage.PremiumRequests != 0 {
		emit(Event{Kind: KindUsage, Usage: &Usage{PremiumRequests: l.Usage.PremiumRequests}})
	}
	switch {
	case p.sessionError != "":
		emit(Event{Kind: KindResult, Text: capText(p.sessionError)})
	case l.ExitCode != nil && *l.ExitCode == 0:
		emit(Event{Kind: KindResult, Success: true, Text: p.lastText})
	case l.ExitCode != nil:
		emit(Event{Kind: KindResult, Text: fmt.Sprintf("run ended with exit code %d", *l.ExitCode)})
	default:
		emit(Event{Kind: KindResult, Text: "run ended without an exit code"})
	}
}

func copilotChangeKind(kind string) ChangeKind {
	switch kind {
	case "create", "add", "added":
		return ChangeAdded
	case "delete", "deleted":
		return ChangeDeleted
	case "edit", "update", "modify":
		return ChangeModified
	}
	return ""
}
