package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ClaudeVersion is the Claude Code release the adapter targets.
const ClaudeVersion = "2.1.197"

// Environment variables Claude Code reads.
const (
	envAnthropicAPIKey    = "ANTHROPIC_API_KEY"
	envClaudeOAuthToken   = "CLAUDE_CODE_OAUTH_TOKEN"
	envAnthropicAuthToken = "ANTHROPIC_AUTH_TOKEN"
	envAnthropicBaseURL   = "ANTHROPIC_BASE_URL"
)

// ClaudeAdapter drives Claude Code (`claude -p --output-format stream-json`).
//
// It passes --dangerously-skip-permissions because the kennel is the
// sandbox, and IS_SANDBOX=1 so that this also works if the kennel user is
// root. SIGTERM does not stop Claude Code (it finishes its turn); the kennel
// stops runs with SIGINT first.
//
// A read-only task runs in plan mode (--permission-mode plan, HARNESSES.md
// §2.2) instead: reads are allowed, and a write or a shell command is
// denied as a tool error and listed in result.permission_denials (§2.4).
type ClaudeAdapter struct{}

// Name implements Adapter.
func (ClaudeAdapter) Name() Name { return Claude }

// Version implements Adapter.
func (ClaudeAdapter) Version() string { return ClaudeVersion }

// Invocation implements Adapter.
func (ClaudeAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: claude invocation: %w", err)
	}
	argv := []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}
	if task.ReadOnly {
		argv = append(argv, "--permission-mode", "plan")
	} else {
		argv = append(argv, "--dangerously-skip-permissions")
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume", task.ResumeID)
	}
	argv = append(argv, "--", Prompt(task))
	env := buildEnv([]string{
		"IS_SANDBOX=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, creds, keyNames(ClaudeAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// Keys implements Adapter.
func (ClaudeAdapter) Keys() []Key {
	return []Key{{envAnthropicAPIKey, true}, {envClaudeOAuthToken, true}, {envAnthropicAuthToken, true}, {envAnthropicBaseURL, false}}
}

// NewParser implements Adapter.
func (ClaudeAdapter) NewParser(task Task) Parser {
	p := newClaudeParser(claudeTools)
	p.readOnly = task.ReadOnly
	return p
}

// Traits implements Adapter.
func (ClaudeAdapter) Traits() Traits {
	return Traits{ReadOnly: true, ResumeUsage: UsagePerRun, TwoWay: true, Steer: SteerTurn, Relays: []Kind{KindPermission, KindAsk, KindPlan}}
}

// claudeFlavor describes a CLI that writes Claude Code's stream-json (Claude
// Code itself, Qwen Code).
type claudeFlavor struct {
	// shell tools, and edit tools with the input field naming the file.
	shell map[string]bool
	edits map[string]string
	// apiErrorPrefix marks a final text that is really an API error
	// reported as a successful result (Qwen).
	apiErrorPrefix string
	// messageUsage: the CLI may end without a result line (Qwen at its
	// turn limit, exit 53), and then its usage is only on the assistant
	// messages. The parser sums it, once per message id, and reports the
	// sum when no result line reported usage.
	messageUsage bool
}

var claudeTools = claudeFlavor{
	shell: map[string]bool{"Bash": true},
	edits: map[string]string{"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"},
}

// claudeParser reads Claude Code's stream-json (and its single-object json
// output, which is just the result line).
type claudeParser struct {
	flavor claudeFlavor
	sessionID
	tools map[string]pendingTool
	// readOnly: the run is in plan mode, where a shell command is denied
	// only after the tool_use line, as a tool error. The command's start
	// is held back until its result says whether it ran, so that a denied
	// command is never shown as run.
	readOnly bool
	// messages holds the usage of each assistant message by id, and
	// order the ids in the order first seen (flavor.messageUsage).
	messages map[string]Usage
	order    []string
	// resultUsage: a result line reported usage; the message sums are
	// not needed.
	resultUsage bool
	// spent holds the usage of each assistant message by id, priced by its
	// model, for the spend events while the run goes on; model is the
	// last model an assistant message named.
	spent      map[string]Usage
	spentOrder []string
	model      string
	// planFile is the content of the last plan file written (a Write
	// under .claude/plans/), for an ExitPlanMode request without a plan.
	planFile string
}

// pendingTool is a tool call waiting for its result.
type pendingTool struct {
	name  string
	path  string // edit tools
	shell bool
	// command is the shell command; held is true while its start event
	// is held back (readOnly).
	command string
	held    bool
}

func newClaudeParser(f claudeFlavor) *claudeParser {
	return &claudeParser{flavor: f, tools: make(map[string]pendingTool), messages: make(map[string]Usage), spent: make(map[string]Usage)}
}

type claudeLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   *claudeMessage  `json:"message"`
	Error     json.RawMessage `json:"error"`
	// system/api_retry
	Attempt     int  `json:"attempt"`
	MaxRetries  int  `json:"max_retries"`
	ErrorStatus *int `json:"error_status"`
	// result
	IsError           bool         `json:"is_error"`
	Result            string       `json:"result"`
	Errors            []string     `json:"errors"`
	TerminalReason    string       `json:"terminal_reason"`
	TotalCostUSD      float64      `json:"total_cost_usd"`
	Usage             *claudeUsage `json:"usage"`
	PermissionDenials []struct {
		ToolName  string `json:"tool_name"`
		ToolUseID string `json:"tool_use_id"`
	} `json:"permission_denials"`
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *claudeUsage    `json:"usage"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Claude line types that carry nothing for the event model: token deltas
// that repeat the assistant lines, progress and control acknowledgements.
var claudeIgnored = map[string]bool{
	"stream_event":     true,
	"control_response": true,
}

var claudeIgnoredSystem = map[string]bool{
	"status":            true,
	"task_started":      true,
	"task_notification": true,
}

// Parse implements Parser.
func (p *claudeParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	if bytes.Contains(line, []byte(`"control_`)) && p.control(line, emit) {
		return // a request of the two-way protocol (claude_twoway.go)
	}
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		emit(rawEvent(line))
		return
	}
	switch {
	case claudeIgnored[l.Type]:
	case l.Type == "rate_limit_event":
		if w, ok := claudeLimits(line); ok {
			emit(Event{Kind: KindLimits, Limits: []Window{w}})
		}
	case l.Type == "system":
		p.system(l, line, emit)
	case l.Type == "assistant":
		p.sessionFrom(l.SessionID, emit)
		p.assistant(l, emit)
	case l.Type == "user":
		p.user(l, emit)
	case l.Type == "result":
		p.sessionFrom(l.SessionID, emit)
		p.result(l, emit)
	default:
		emit(rawEvent(line))
	}
}

// Flush implements Parser. Commands still held back never got a result
// (the run ended first): they are reported as started, since they may have
// run. Without a result line, the usage summed over the assistant messages
// is reported (flavor.messageUsage).
func (p *claudeParser) Flush(emit func(Event)) {
	for _, id := range p.heldIDs() {
		t := p.tools[id]
		emit(Event{Kind: KindCommand, Tool: t.name, ToolID: id, Command: t.command})
	}
	if p.flavor.messageUsage && !p.resultUsage {
		var sum Usage
		for _, id := range p.order {
			sum = sum.Add(p.messages[id])
		}
		if !sum.IsZero() {
			sum = p.priced(sum)
			emit(Event{Kind: KindUsage, Usage: &sum})
		}
	}
}

// spend reports the run's usage so far after an assistant message: the
// sum over message ids (the lines of one message repeat its usage, so
// each id counts once and its last line wins), each priced by its
// message's model. Claude Code 2.1.197 puts usage on every assistant
// line (claude-task.jsonl) but dollars only on the result line, and its
// streamed output_tokens stay at the first count (1 in the capture,
// against 45 per message in the result): the figure runs low, and the
// result's total_cost_usd replaces it.
func (p *claudeParser) spend(m *claudeMessage, emit func(Event)) {
	if m.ID == "" || m.Usage == nil {
		return
	}
	if m.Model != "" && !strings.HasPrefix(m.Model, "<") { // "<synthetic>" messages cost nothing
		p.model = m.Model
	}
	u := p.priced(m.Usage.usage())
	if prev, ok := p.spent[m.ID]; ok && prev == u {
		return
	}
	if _, seen := p.spent[m.ID]; !seen {
		p.spentOrder = append(p.spentOrder, m.ID)
	}
	p.spent[m.ID] = u
	var sum Usage
	for _, id := range p.spentOrder {
		sum = sum.Add(p.spent[id])
	}
	emit(Event{Kind: KindSpend, Usage: &sum})
}

// priced sets the cost of a usage without one from the price table, by
// the model the run's messages named (Anthropic's meaning of the token
// fields: input_tokens excludes the cache).
func (p *claudeParser) priced(u Usage) Usage { return withPrice(u, p.model, false) }

// heldIDs lists the tool ids of held-back commands, sorted for a stable
// order.
func (p *claudeParser) heldIDs() []string {
	var ids []string
	for id, t := range p.tools {
		if t.held {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// messageUsage remembers the usage of an assistant message. Claude-style
// CLIs write one line per content block with the same message id and
// usage, so each id counts once; the last line of an id wins.
func (p *claudeParser) messageUsage(m *claudeMessage) {
	if !p.flavor.messageUsage || m.ID == "" || m.Usage == nil {
		return
	}
	if _, seen := p.messages[m.ID]; !seen {
		p.order = append(p.order, m.ID)
	}
	p.messages[m.ID] = m.Usage.usage()
}

func (u claudeUsage) usage() Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

func (p *claudeParser) system(l claudeLine, line []byte, emit func(Event)) {
	switch {
	case l.Subtype == "init":
		p.sessionFrom(l.SessionID, emit)
	case l.Subtype == "api_retry":
		msg := "model API request failed"
		if l.ErrorStatus != nil {
			msg += fmt.Sprintf(" with HTTP %d", *l.ErrorStatus)
		}
		if e := jsonString(l.Error); e != "" {
			msg += " (" + e + ")"
		}
		emit(Event{Kind: KindError, Text: fmt.Sprintf("%s; retry %d of %d", msg, l.Attempt, l.MaxRetries)})
	case claudeIgnoredSystem[l.Subtype]:
	default:
		emit(rawEvent(line))
	}
}

func (p *claudeParser) assistant(l claudeLine, emit func(Event)) {
	if l.Message == nil {
		return
	}
	p.messageUsage(l.Message)
	p.spend(l.Message, emit)
	var blocks []claudeBlock
	if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
		if text := contentText(l.Message.Content); text != "" {
			emit(Event{Kind: KindText, Text: capText(text)})
		}
		return
	}
	if e := jsonString(l.Error); e != "" {
		// A synthetic message standing for an API or auth failure.
		text := contentText(l.Message.Content)
		if text == "" {
			text = e
		}
		emit(Event{Kind: KindError, Text: capText(text)})
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				emit(Event{Kind: KindText, Text: capText(b.Text)})
			}
		case "tool_use":
			p.toolUse(b, emit)
		case "thinking", "redacted_thinking":
		default:
			if raw, err := json.Marshal(b); err == nil {
				emit(rawEvent(raw))
			}
		}
	}
}

func (p *claudeParser) toolUse(b claudeBlock, emit func(Event)) {
	t := pendingTool{name: b.Name}
	var input map[string]json.RawMessage
	_ = json.Unmarshal(b.Input, &input) // a tool without object input is still a tool use
	if p.flavor.shell[b.Name] {
		t.shell, t.command = true, jsonString(input["command"])
		if p.readOnly {
			t.held = true
			p.tools[b.ID] = t
			return
		}
		p.tools[b.ID] = t
		emit(Event{Kind: KindCommand, Tool: b.Name, ToolID: b.ID, Command: t.command})
		return
	}
	if field, ok := p.flavor.edits[b.Name]; ok {
		t.path = jsonString(input[field])
		if b.Name == "Write" && strings.Contains(t.path, claudePlanDir) {
			p.planFile = capText(jsonString(input["content"]))
		}
	}
	p.tools[b.ID] = t
	emit(Event{Kind: KindToolUse, Tool: b.Name, ToolID: b.ID, Input: capInput(b.Input)})
}

var claudeExitCode = regexp.MustCompile(`^Exit code (\d+)`)

func (p *claudeParser) user(l claudeLine, emit func(Event)) {
	if l.Message == nil {
		return
	}
	var blocks []claudeBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return // a plain user message: the prompt, not an event
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		t, ok := p.tools[b.ToolUseID]
		if !ok {
			continue
		}
		delete(p.tools, b.ToolUseID)
		text := contentText(b.Content)
		denied := b.IsError && (claudeDenial(text) || (p.readOnly && t.shell && !claudeExitCode.MatchString(text)))
		if t.held && !denied {
			emit(Event{Kind: KindCommand, Tool: t.name, ToolID: b.ToolUseID, Command: t.command})
		}
		switch {
		case denied && t.shell:
			emit(Event{Kind: KindCommand, Tool: t.name, ToolID: b.ToolUseID, Command: t.command, Denied: true, Text: capText(text)})
		case denied:
			emit(Event{Kind: KindError, Tool: t.name, ToolID: b.ToolUseID, Denied: true, Text: capText(text)})
		case t.shell && !b.IsError:
			emit(Event{Kind: KindCommand, Tool: t.name, ToolID: b.ToolUseID, ExitCode: exitCode(0), Text: capText(text)})
		case t.shell && claudeExitCode.MatchString(text):
			n, _ := strconv.Atoi(claudeExitCode.FindStringSubmatch(text)[1])
			emit(Event{Kind: KindCommand, Tool: t.name, ToolID: b.ToolUseID, ExitCode: exitCode(n), Text: capText(text)})
		case b.IsError:
			emit(Event{Kind: KindError, Tool: t.name, ToolID: b.ToolUseID, Text: capText(text)})
		case t.path != "":
			emit(Event{Kind: KindFileChanged, Tool: t.name, ToolID: b.ToolUseID, Path: t.path})
		}
	}
}

func (p *claudeParser) result(l claudeLine, emit func(Event)) {
	// Commands still held back that the result lists as denied never ran.
	for _, d := range l.PermissionDenials {
		if t, ok := p.tools[d.ToolUseID]; ok && t.held {
			delete(p.tools, d.ToolUseID)
			emit(Event{Kind: KindCommand, Tool: t.name, ToolID: d.ToolUseID, Command: t.command, Denied: true, Text: "permission denied"})
		}
	}
	if l.Usage != nil || l.TotalCostUSD != 0 {
		u := Usage{CostUSD: l.TotalCostUSD}
		if l.Usage != nil {
			u = l.Usage.usage()
			u.CostUSD = l.TotalCostUSD
		}
		if !u.IsZero() {
			p.resultUsage = true
			u = p.priced(u)
			emit(Event{Kind: KindUsage, Usage: &u})
		}
	}
	ok := l.Subtype == "success" && !l.IsError
	if ok && p.flavor.apiErrorPrefix != "" && strings.HasPrefix(strings.TrimSpace(l.Result), p.flavor.apiErrorPrefix) {
		ok = false
	}
	if ok {
		emit(Event{Kind: KindResult, Success: true, Text: capText(l.Result)})
		return
	}
	var errs []string
	for _, e := range l.Errors {
		if !strings.HasPrefix(e, "[ede_diagnostic]") { // internal diagnostics, not for the user
			errs = append(errs, e)
		}
	}
	var msg string
	switch {
	case len(errs) > 0:
		msg = strings.Join(errs, "; ")
	case l.TerminalReason == "aborted_tools":
		msg = "the run was interrupted"
	case errorMessage(l.Error) != "":
		msg = errorMessage(l.Error)
	case l.Result != "":
		msg = l.Result
	default:
		msg = "run ended with " + l.Subtype
	}
	emit(Event{Kind: KindResult, Text: capText(msg)})
}

// claudeDenial tells a tool result that is a permission denial, by the
// texts Claude Code 2.1.197 writes (HARNESSES.md §2.4,
// claude-permission-denied.jsonl): "This command requires approval" for
// Bash, "Claude requested permissions to write to …, but you haven't
// granted it yet." for edits.
func claudeDenial(text string) bool {
	return strings.Contains(text, "requires approval") || strings.Contains(text, "haven't granted it yet")
}

// errorMessage reads {"message": …} or a plain string.
func errorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	if s := jsonString(raw); !strings.HasPrefix(s, "{") {
		return s
	}
	return ""
}

// askUserText renders AskUserQuestion input ({questions:[{question, options:
// [{label, description}]}]}) as one message.
func askUserText(raw json.RawMessage) string {
	var in struct {
		Questions []struct {
			Question string `json:"question"`
			Options  []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"questions"`
	}
	if json.Unmarshal(raw, &in) != nil || len(in.Questions) == 0 {
		return capText(string(raw))
	}
	var b strings.Builder
	for i, q := range in.Questions {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(q.Question)
		for _, o := range q.Options {
			b.WriteString("\n- " + o.Label)
			if o.Description != "" {
				b.WriteString(": " + o.Description)
			}
		}
	}
	return b.String()
}
