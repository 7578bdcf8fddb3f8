package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Claude Code's two-way mode (HARNESSES.md §2.2, §2.3 and §2.6, confirmed
// by claude-question-askuserquestion-stdio.txt and
// claude-cancel-interrupt-control.txt, both captured from 2.1.197):
//
//	claude -p --input-format stream-json --output-format stream-json --verbose --permission-prompt-tool stdio
//
// keeps reading stdin, one JSON message a line, until stdin closes, also
// after its result line. It asks for every tool use its permission mode
// does not allow by itself with a control_request (subtype can_use_tool)
// on stdout and waits for the control_response on stdin. With the stdio
// prompt tool it offers AskUserQuestion, EnterPlanMode and ExitPlanMode,
// which arrive the same way. --dangerously-skip-permissions is not passed:
// the owner decides.
//
// The replies' shapes: allow, deny (with interrupt) and the answers map are
// §2.3/§2.6 and the captured driver line of the AskUserQuestion transcript;
// the error response to a request subtype Fetch does not serve
// ({"subtype":"error","request_id":…,"error":…}), control_cancel_request,
// and that allow echoes the original input as updatedInput, are what
// anthropics/claude-agent-sdk-python (src/claude_agent_sdk/_internal/
// query.py) does. ExitPlanMode's input {"plan": …} is what Anthropic's SDK
// docs and other clients show; it was not captured, and some clients see
// an empty input with the plan written to a file under .claude/plans/
// first, so the parser takes the plan from that Write when the input has
// none.

// TwoWayInvocation implements TwoWay.
func (ClaudeAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: claude two-way invocation: %w", err)
	}
	argv := []string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio"}
	switch {
	case mode == ModePlan || task.ReadOnly:
		argv = append(argv, "--permission-mode", "plan")
	case mode == ModeWork:
	default:
		return Invocation{}, fmt.Errorf("harness: claude two-way invocation: %w: unknown mode %q", ErrInvalidTask, mode)
	}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume", task.ResumeID)
	}
	env := buildEnv([]string{
		"IS_SANDBOX=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, creds, keyNames(ClaudeAdapter{}.Keys())...)
	return Invocation{Argv: argv, Env: env}, nil
}

// claudeInitID is the request id of the opening initialize request.
const claudeInitID = "fetch_init_1"

// Opening implements TwoWay: the initialize request (as the SDK sends it,
// and as the captured AskUserQuestion run began), then the prompt as a user
// message.
func (ClaudeAdapter) Opening(task Task, mode TwoWayMode) ([][]byte, error) {
	if err := validate(task); err != nil {
		return nil, fmt.Errorf("harness: claude opening: %w", err)
	}
	init, err := claudeControlRequest(claudeInitID, map[string]any{"subtype": "initialize", "hooks": nil})
	if err != nil {
		return nil, err
	}
	msg, err := claudeUser(TwoWayPrompt(task, mode), task.Attachments)
	if err != nil {
		return nil, err
	}
	return [][]byte{init, msg}, nil
}

// claudeImage is an image content block of a user message (the Messages
// API's base64 source), how Claude Code takes a picture on its stdin.
type claudeImage struct {
	Type   string `json:"type"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      []byte `json:"data"`
	} `json:"source"`
}

// claudeUser is a user message with text and, for the image attachments
// that carry their data, image blocks after it.
func claudeUser(text string, atts []Attachment) ([]byte, error) {
	var blocks []any
	for _, a := range atts {
		if !a.IsImage() || a.Data == nil {
			continue
		}
		img := claudeImage{Type: "image"}
		img.Source.Type, img.Source.MediaType, img.Source.Data = "base64", a.MediaType, a.Data
		blocks = append(blocks, img)
	}
	if len(blocks) == 0 {
		return ClaudeAdapter{}.UserMessage(text)
	}
	m := claudeUserMessage{Type: "user"}
	m.Message.Role, m.Message.Content = "user", append([]any{map[string]string{"type": "text", "text": text}}, blocks...)
	return jsonLine(m)
}

// claudeUserMessage is a user message line (§2.2).
type claudeUserMessage struct {
	Type    string `json:"type"`
	Message struct {
		Role string `json:"role"`
		// Content is the text, or content blocks (text and images).
		Content any `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
}

// UserMessage implements TwoWay.
func (ClaudeAdapter) UserMessage(text string) ([]byte, error) {
	m := claudeUserMessage{Type: "user"}
	m.Message.Role, m.Message.Content = "user", text
	return jsonLine(m)
}

// Interrupt implements TwoWay (claude-cancel-interrupt-control.txt).
func (ClaudeAdapter) Interrupt(id string) ([]byte, error) {
	if !safeID.MatchString(id) {
		return nil, fmt.Errorf("harness: claude interrupt: request id %q must match %s", id, safeID)
	}
	return claudeControlRequest(id, map[string]any{"subtype": "interrupt"})
}

// claudeControlResponse is the envelope of every reply to a control_request.
type claudeControlResponse struct {
	Type     string `json:"type"`
	Response struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Response  any    `json:"response,omitempty"`
		Error     string `json:"error,omitempty"`
	} `json:"response"`
}

type claudeAllow struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
}

type claudeDeny struct {
	Behavior  string `json:"behavior"`
	Message   string `json:"message"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

func claudeSuccess(id string, response any) ([]byte, error) {
	var r claudeControlResponse
	r.Type = "control_response"
	r.Response.Subtype, r.Response.RequestID, r.Response.Response = "success", id, response
	return jsonLine(r)
}

// Allow implements TwoWay: allow with the original input as updatedInput.
func (ClaudeAdapter) Allow(r Request) ([]byte, error) {
	if r.ID == "" || r.Control != claudeCanUseTool || len(r.Input) == 0 {
		return nil, fmt.Errorf("harness: claude allow %s: %w", r.Tool, ErrCannotReply)
	}
	return claudeSuccess(r.ID, claudeAllow{Behavior: "allow", UpdatedInput: r.Input})
}

// Deny implements TwoWay. A can_use_tool request gets behavior deny with
// the reason as message; any other request (a subtype Fetch does not
// serve) gets the protocol's error response.
func (a ClaudeAdapter) Deny(r Request, reason string) ([]byte, error) {
	return a.deny(r, reason, false)
}

// DenyAndStop implements TwoWay: deny with interrupt:true (§2.3).
func (a ClaudeAdapter) DenyAndStop(r Request, reason string) ([]byte, error) {
	return a.deny(r, reason, true)
}

func (ClaudeAdapter) deny(r Request, reason string, stop bool) ([]byte, error) {
	if r.ID == "" {
		return nil, fmt.Errorf("harness: claude deny: %w: the request has no id", ErrCannotReply)
	}
	reason = capString(strings.TrimSpace(reason), maxReasonBytes)
	if reason == "" {
		reason = defaultDenial
	}
	if r.Control != claudeCanUseTool {
		var e claudeControlResponse
		e.Type = "control_response"
		e.Response.Subtype, e.Response.RequestID, e.Response.Error = "error", r.ID, reason
		return jsonLine(e)
	}
	return claudeSuccess(r.ID, claudeDeny{Behavior: "deny", Message: reason, Interrupt: stop})
}

// Answer implements TwoWay: allow with updatedInput = the original input
// plus "answers": {question text: answer} (§2.6; the captured reply of
// claude-question-askuserquestion-stdio.txt).
func (ClaudeAdapter) Answer(r Request, answers []string) ([]byte, error) {
	if r.ID == "" || r.Control != claudeCanUseTool || r.Tool != "AskUserQuestion" || len(r.Input) == 0 {
		return nil, fmt.Errorf("harness: claude answer %s: %w", r.Tool, ErrCannotReply)
	}
	if len(answers) != len(r.Questions) {
		return nil, fmt.Errorf("harness: claude answer: %d answers for %d questions: %w", len(answers), len(r.Questions), ErrCannotReply)
	}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(r.Input, &input); err != nil {
		return nil, fmt.Errorf("harness: claude answer: %w: input is not an object", ErrCannotReply)
	}
	m := make(map[string]string, len(answers))
	for i, q := range r.Questions {
		m[q.Question] = answers[i]
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("harness: claude answer: %w", err)
	}
	input["answers"] = b
	updated, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("harness: claude answer: %w", err)
	}
	return claudeSuccess(r.ID, claudeAllow{Behavior: "allow", UpdatedInput: updated})
}

func claudeControlRequest(id string, request map[string]any) ([]byte, error) {
	return jsonLine(struct {
		Type      string         `json:"type"`
		RequestID string         `json:"request_id"`
		Request   map[string]any `json:"request"`
	}{"control_request", id, request})
}

// jsonLine marshals v as one line, newline included. HTML characters are
// not escaped: the CLI reads the text as written.
func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("harness: encode message: %w", err)
	}
	return b.Bytes(), nil
}

// claudeCanUseTool is the control_request subtype of a permission request.
const claudeCanUseTool = "can_use_tool"

// claudePlanDir marks the files Claude Code writes its plans to.
const claudePlanDir = "/.claude/plans/"

// control reads a control line (control_request, control_cancel_request)
// and reports whether line was one. A control line that is not valid JSON,
// or has no usable request id or request, is a bad request; so is a
// request this parser cannot relay. None of them stops the run.
func (p *claudeParser) control(line []byte, emit func(Event)) bool {
	var head struct {
		Type      string          `json:"type"`
		RequestID json.RawMessage `json:"request_id"`
		Request   json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		if !bytes.Contains(line, []byte(`"control_request"`)) {
			return false
		}
		emit(badRequest(Request{}, "control request that is not valid JSON: "+capString(string(line), 512)))
		return true
	}
	switch head.Type {
	case "control_request", "control_cancel_request":
	default:
		return false
	}
	var id string
	if json.Unmarshal(head.RequestID, &id) != nil || id == "" {
		emit(badRequest(Request{}, head.Type+" without a string request_id: "+capString(string(line), 512)))
		return true
	}
	if head.Type == "control_cancel_request" {
		emit(Event{Kind: KindRequestCancelled, Request: &Request{ID: id}})
		return true
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(head.Request, &req) != nil || req == nil {
		emit(badRequest(Request{ID: id}, "control_request without a request object"))
		return true
	}
	r := Request{ID: id, Control: jsonString(req["subtype"])}
	if r.Control != claudeCanUseTool {
		emit(badRequest(r, fmt.Sprintf("unsupported control request subtype %q", capString(r.Control, 100))))
		return true
	}
	r.Tool, r.ToolUseID = jsonString(req["tool_name"]), jsonString(req["tool_use_id"])
	r.Reason = capString(jsonString(req["decision_reason"]), 1024)
	input := bytes.TrimSpace(req["input"])
	var fields map[string]json.RawMessage
	switch {
	case r.Tool == "":
		emit(badRequest(r, "can_use_tool without a tool_name"))
		return true
	case len(input) > maxRequestInputBytes:
		emit(badRequest(r, fmt.Sprintf("the %s request's input is %d bytes, too large to relay", r.Tool, len(input))))
		return true
	case json.Unmarshal(input, &fields) != nil || fields == nil:
		emit(badRequest(r, fmt.Sprintf("the %s request's input is not a JSON object", r.Tool)))
		return true
	}
	r.Input = json.RawMessage(bytes.Clone(input))
	r.Fingerprint = fingerprint(r.Tool, input)
	r.Action = claudeAction(r.Tool)
	if r.Action == ActionFetch {
		r.URL = jsonString(fields["url"])
	}
	switch {
	case r.Tool == "AskUserQuestion":
		qs, err := claudeQuestions(fields["questions"])
		if err != nil {
			emit(badRequest(r, "AskUserQuestion: "+err.Error()))
			return true
		}
		r.Questions = qs
		emit(Event{Kind: KindAsk, Tool: r.Tool, ToolID: r.ToolUseID, Text: askUserText(input), Request: &r})
	case r.Tool == "ExitPlanMode":
		r.Plan = jsonString(fields["plan"])
		if strings.TrimSpace(r.Plan) == "" {
			r.Plan = p.planFile
		}
		emit(Event{Kind: KindPlan, Tool: r.Tool, ToolID: r.ToolUseID, Text: capText(r.Plan), Request: &r})
	default:
		p.describe(&r, fields)
		emit(Event{Kind: KindPermission, Tool: r.Tool, ToolID: r.ToolUseID, Command: r.Command, Path: r.Path, Request: &r})
	}
	return true
}

// claudeAction is what a Claude Code tool does; "" for a tool it does not
// know (an MCP tool, a Qwen tool name), which the policy places by its
// command, if it has one.
func claudeAction(tool string) Action {
	switch tool {
	case "Bash", "BashOutput", "KillShell":
		return ActionShell
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return ActionEdit
	case "Read", "Glob", "Grep", "LS":
		return ActionRead
	case "WebFetch", "WebSearch":
		return ActionFetch
	case "TodoWrite", "Task", "ExitPlanMode", "AskUserQuestion":
		return ActionInternal
	}
	return ""
}

// describe fills what the owner is shown of a permission request: the
// command of a shell tool, the file and a compact diff of an edit tool.
func (p *claudeParser) describe(r *Request, in map[string]json.RawMessage) {
	if p.flavor.shell[r.Tool] {
		r.Command = jsonString(in["command"])
		return
	}
	field, ok := p.flavor.edits[r.Tool]
	if !ok {
		return
	}
	r.Path = jsonString(in[field])
	var d diffBuilder
	switch r.Tool {
	case "Edit":
		d.edit(jsonString(in["old_string"]), jsonString(in["new_string"]))
	case "MultiEdit":
		var edits []struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
		}
		_ = json.Unmarshal(in["edits"], &edits)
		for _, e := range edits {
			d.edit(e.Old, e.New)
		}
	case "Write":
		d.edit("", jsonString(in["content"]))
	case "NotebookEdit":
		d.edit("", jsonString(in["new_source"]))
	}
	r.Diff = d.String()
}

// diffBuilder writes a compact diff: old lines with "-", new lines with
// "+", bounded in lines and bytes, with a note of what was cut.
type diffBuilder struct {
	b     strings.Builder
	lines int
	cut   int
}

func (d *diffBuilder) edit(old, new string) {
	if old != "" {
		d.add("-", old)
	}
	if new != "" {
		d.add("+", new)
	}
}

func (d *diffBuilder) add(sign, text string) {
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if d.lines >= maxDiffLines || d.b.Len()+len(l)+2 > maxDiffBytes {
			d.cut++
			continue
		}
		d.lines++
		d.b.WriteString(sign + l + "\n")
	}
}

func (d *diffBuilder) String() string {
	s := d.b.String()
	if d.cut > 0 {
		s += "… " + strconv.Itoa(d.cut) + " more lines\n"
	}
	return strings.TrimSuffix(s, "\n")
}

// claudeQuestions reads AskUserQuestion's questions[] (§2.6:
// {question, header, multiSelect, options[{label, description}]}).
func claudeQuestions(raw json.RawMessage) ([]Question, error) {
	var in []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("questions are not a list of questions")
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("no questions")
	}
	seen := make(map[string]bool)
	out := make([]Question, 0, len(in))
	for _, q := range in {
		if strings.TrimSpace(q.Question) == "" {
			return nil, fmt.Errorf("a question without text")
		}
		if seen[q.Question] {
			// The answers are keyed by the question's text.
			return nil, fmt.Errorf("the question %q is asked twice", capString(q.Question, 100))
		}
		seen[q.Question] = true
		oq := Question{Question: capString(q.Question, 4096), Header: capString(q.Header, 256), MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			oq.Options = append(oq.Options, Option{Label: capString(o.Label, 512), Description: capString(o.Description, 1024)})
		}
		if oq.Question != q.Question {
			return nil, fmt.Errorf("a question longer than 4096 bytes")
		}
		out = append(out, oq)
	}
	return out, nil
}

// badRequest is the event of a request Fetch cannot relay.
func badRequest(r Request, why string) Event {
	r.Input, r.Questions, r.Plan = nil, nil, "" // it can only be denied
	return Event{Kind: KindBadRequest, Tool: r.Tool, ToolID: r.ToolUseID, Text: why, Request: &r}
}

// fingerprint identifies a tool call by its tool and its input.
func fingerprint(tool string, input []byte) string {
	var compact bytes.Buffer
	if json.Compact(&compact, input) != nil {
		compact.Reset()
		compact.Write(input)
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(compact.Bytes())
	return hex.EncodeToString(h.Sum(nil))[:16]
}
