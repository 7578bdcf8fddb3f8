package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// GeminiVersion is the Gemini CLI release the adapter targets.
const GeminiVersion = "0.61.0"

// Environment variables Gemini CLI reads for authentication.
const (
	envGeminiAPIKey       = "GEMINI_API_KEY"
	envGoogleAPIKey       = "GOOGLE_API_KEY"
	envGoogleGeminiBase   = "GOOGLE_GEMINI_BASE_URL"
	envGoogleUseVertex    = "GOOGLE_GENAI_USE_VERTEXAI"
	envGoogleCloudProject = "GOOGLE_CLOUD_PROJECT"
	envGoogleCloudRegion  = "GOOGLE_CLOUD_LOCATION"
)

// GeminiAdapter drives Gemini CLI (`gemini -p … -o stream-json --yolo`).
//
// GEMINI_CLI_TRUST_WORKSPACE=true, or headless runs exit 55 in an untrusted
// folder; GEMINI_CLI_NO_RELAUNCH=true, so that Gemini is one process and a
// stop reaches it (the relaunched child ignores signals to its parent).
// Without --yolo, headless Gemini offers the model no write or shell tools
// (HARNESSES.md §4.2, observed in gemini-default-approval-readonly.jsonl):
// a read-only task runs with --approval-mode default.
//
// Two-way (TwoWay, acp.go), it runs `gemini --acp` without --yolo: the CLI
// asks before each tool call its default approval mode does not allow.
type GeminiAdapter struct{ acpTwoWay }

// Traits implements Adapter.
func (GeminiAdapter) Traits() Traits {
	return acpTraits(Traits{ReadOnly: true, ResumeUsage: UsagePerRun})
}

// TwoWayInvocation implements TwoWay.
func (a GeminiAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := a.checkMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: gemini two-way invocation: %w", err)
	}
	argv := []string{"gemini", "--acp"}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	env := buildEnv([]string{
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, creds, keyNames(GeminiAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Name implements Adapter.
func (GeminiAdapter) Name() Name { return Gemini }

// Version implements Adapter.
func (GeminiAdapter) Version() string { return GeminiVersion }

// Invocation implements Adapter.
func (GeminiAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: gemini invocation: %w", err)
	}
	argv := []string{"gemini", "--output-format", "stream-json"}
	if task.ReadOnly {
		argv = append(argv, "--approval-mode", "default")
	} else {
		argv = append(argv, "--yolo")
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume", task.ResumeID)
	}
	// --prompt=… keeps a prompt that starts with '-' from being read as a flag.
	argv = append(argv, "--prompt="+Prompt(task))
	env := buildEnv([]string{
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, creds, keyNames(GeminiAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter.
func (GeminiAdapter) Keys() []Key {
	return []Key{{envGeminiAPIKey, true}, {envGoogleAPIKey, true}, {envGoogleGeminiBase, false}, {envGoogleUseVertex, false}, {envGoogleCloudProject, false}, {envGoogleCloudRegion, false}}
}

// NewParser implements Adapter.
func (GeminiAdapter) NewParser(task Task) Parser {
	return &formatOr{rpc: isACP, twoWay: newACPParser(task), otherwise: &geminiParser{tools: make(map[string]pendingTool)}}
}

// geminiParser reads Gemini CLI's stream-json, and its json output (one
// object with session_id, response and stats) when that arrives as a line.
type geminiParser struct {
	sessionID
	tools map[string]pendingTool
	streamedText
}

type geminiLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Error      json.RawMessage `json:"error"`
	Message    string          `json:"message"`
	Severity   string          `json:"severity"`
	Stats      json.RawMessage `json:"stats"`
	// json output
	Response *string `json:"response"`
}

var (
	geminiShell = map[string]bool{"run_shell_command": true}
	geminiEdits = map[string]bool{"replace": true, "write_file": true}
)

// Parse implements Parser.
func (p *geminiParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	var l geminiLine
	if err := json.Unmarshal(line, &l); err != nil {
		p.flushText(emit)
		emit(rawEvent(line))
		return
	}
	if l.Type == "message" && l.Role == "assistant" {
		p.pending.WriteString(l.Content)
		if !l.Delta {
			p.flushText(emit)
		}
		return
	}
	p.flushText(emit)
	switch l.Type {
	case "init":
		p.sessionFrom(l.SessionID, emit)
	case "message": // the user's prompt echoed back
	case "tool_use":
		p.segment.reset()
		p.toolUse(l, emit)
	case "tool_result":
		p.segment.reset()
		p.toolResult(l, emit)
	case "error":
		emit(Event{Kind: KindError, Text: capText(l.Message)})
	case "result":
		p.sessionFrom(l.SessionID, emit)
		if u, ok := geminiStreamUsage(l.Stats); ok {
			emit(Event{Kind: KindUsage, Usage: &u})
		}
		if l.Status == "success" {
			emit(Event{Kind: KindResult, Success: true, Text: capText(p.segment.String())})
			return
		}
		msg := errorMessage(l.Error)
		if msg == "" {
			msg = "run ended with status " + l.Status
		}
		emit(Event{Kind: KindResult, Text: capText(msg)})
	case "":
		if l.SessionID != "" && (l.Response != nil || len(l.Error) > 0) {
			p.jsonOutput(l, emit)
			return
		}
		emit(rawEvent(line))
	default:
		emit(rawEvent(line))
	}
}

// Flush implements Parser.
func (p *geminiParser) Flush(emit func(Event)) { p.flushText(emit) }

func (p *geminiParser) toolUse(l geminiLine, emit func(Event)) {
	var params map[string]json.RawMessage
	_ = json.Unmarshal(l.Parameters, &params) // tools without object parameters are still tool uses
	t := pendingTool{name: l.ToolName}
	switch {
	case geminiShell[l.ToolName]:
		t.shell = true
		p.tools[l.ToolID] = t
		emit(Event{Kind: KindCommand, Tool: l.ToolName, ToolID: l.ToolID, Command: jsonString(params["command"])})
		return
	case geminiEdits[l.ToolName]:
		t.path = jsonString(params["file_path"])
	}
	p.tools[l.ToolID] = t
	emit(Event{Kind: KindToolUse, Tool: l.ToolName, ToolID: l.ToolID, Input: capInput(l.Parameters)})
}

func (p *geminiParser) toolResult(l geminiLine, emit func(Event)) {
	t, ok := p.tools[l.ToolID]
	delete(p.tools, l.ToolID)
	if !ok {
		t = pendingTool{name: strings.SplitN(l.ToolID, "__", 2)[0]}
	}
	switch {
	case l.Status != "success":
		msg := errorMessage(l.Error)
		if msg == "" {
			msg = l.Output
		}
		emit(Event{Kind: KindError, Tool: t.name, ToolID: l.ToolID, Text: capText(msg)})
	case t.path != "":
		emit(Event{Kind: KindFileChanged, Tool: t.name, ToolID: l.ToolID, Path: t.path})
	}
}

// geminiStreamUsage reads result.stats of stream-json.
func geminiStreamUsage(raw json.RawMessage) (Usage, bool) {
	type tokens struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
	}
	var s struct {
		tokens
		Models map[string]tokens `json:"models"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return Usage{}, false
	}
	u := Usage{InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, CacheReadTokens: s.Cached}
	if u.IsZero() {
		return u, false
	}
	// Priced per model (gemini-task.jsonl: stats.models splits the run
	// between a flash-lite and a pro model; input_tokens include cached).
	// One model without a price makes the whole cost unknown.
	var priced Usage
	for name, m := range s.Models {
		priced = priced.Add(withPrice(Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens, CacheReadTokens: m.Cached}, name, true))
	}
	switch {
	case len(s.Models) == 0:
		u.CostUnknown = true
	case priced.CostUnknown:
		u.CostUnknown = true
	default:
		u.CostUSD, u.CostEstimated, u.PricedAs = priced.CostUSD, priced.CostEstimated, priced.PricedAs
	}
	return u, true
}

// jsonOutput handles the single object of --output-format json.
func (p *geminiParser) jsonOutput(l geminiLine, emit func(Event)) {
	p.sessionFrom(l.SessionID, emit)
	var stats struct {
		Models map[string]struct {
			Tokens struct {
				Input      int64 `json:"input"`
				Candidates int64 `json:"candidates"`
				Cached     int64 `json:"cached"`
			} `json:"tokens"`
		} `json:"models"`
	}
	if json.Unmarshal(l.Stats, &stats) == nil {
		var u Usage
		for _, m := range stats.Models {
			u.InputTokens += m.Tokens.Input
			u.OutputTokens += m.Tokens.Candidates
			u.CacheReadTokens += m.Tokens.Cached
		}
		if !u.IsZero() {
			emit(Event{Kind: KindUsage, Usage: &u})
		}
	}
	if msg := errorMessage(l.Error); msg != "" {
		emit(Event{Kind: KindResult, Text: capText(msg)})
		return
	}
	text := ""
	if l.Response != nil {
		text = *l.Response
	}
	if strings.TrimSpace(text) != "" {
		emit(Event{Kind: KindText, Text: capText(text)})
	}
	emit(Event{Kind: KindResult, Success: true, Text: capText(text)})
}
