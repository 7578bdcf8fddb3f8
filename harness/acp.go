package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// The Agent Client Protocol (ACP), the two-way mode of Gemini CLI, Qwen
// Code, Copilot CLI and OpenCode, and of any agent the generic harness
// runs (acp_generic.go): JSON-RPC 2.0, one message a line, on the CLI's
// stdin and stdout.
// What each message looks like, and where that was confirmed, is in
// testdata/acp/README.md; the fixtures there are what the golden tests
// parse and write.
//
// The client (Fetch) sends initialize, then session/new (or session/load to
// resume) once initialize answered, then session/prompt with the session id
// of that answer: an acpDialogue does this, reacting to the responses. The
// agent streams session/update notifications, asks session/request_permission
// before a tool call its approval mode does not allow by itself, and answers
// session/prompt with a stopReason when its turn ends. Fetch advertises no
// client capabilities (no fs/*, no terminal/*): the agent uses its own tools
// in the kennel, and a request for one of those methods is answered "Method
// not found".
//
// ACP has no questions and no field that carries a denial's reason to the
// model: a denial is the reject option, nothing more.

// Client request ids: the handshake's are fixed, so the parser knows which
// response is which; later prompts count up from acpFirstPromptID.
const (
	acpInitID        = 1
	acpSessionID     = 2 // session/new or session/load
	acpFirstPromptID = 3
)

// acpProtocolVersion is the ACP major version Fetch speaks.
const acpProtocolVersion = 1

// ACP method names.
const (
	acpMethodPermission = "session/request_permission"
	acpMethodUpdate     = "session/update"
	acpMethodCancel     = "session/cancel"
)

// JSON-RPC error codes Fetch answers with (the ones ACP's SDK uses).

// isACP tells whether line is a JSON-RPC 2.0 message.
func isACP(line []byte) bool {
	if !bytes.Contains(line, []byte(`"jsonrpc"`)) {
		return false
	}
	var head struct {
		JSONRPC string `json:"jsonrpc"`
	}
	return json.Unmarshal(line, &head) == nil && head.JSONRPC == "2.0"
}

func acpRequest(id int, method string, params any) ([]byte, error) {
	return jsonLine(rpcOut{JSONRPC: "2.0", ID: id, Method: method, Params: params})
}

func acpNotification(method string, params any) ([]byte, error) {
	return jsonLine(rpcOut{JSONRPC: "2.0", Method: method, Params: params})
}

// acpText is a text content block.
type acpText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// acpOpening is the initialize request: protocol version 1 and no client
// capabilities (an empty object: every capability defaults to off).
func acpOpening() ([][]byte, error) {
	init, err := acpRequest(acpInitID, "initialize", map[string]any{
		"protocolVersion":    acpProtocolVersion,
		"clientCapabilities": map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	return [][]byte{init}, nil
}

// acpSessionParams are the params of session/new (and, with sessionId,
// session/load): the working directory and no MCP servers.
type acpSessionParams struct {
	SessionID  string `json:"sessionId,omitempty"`
	Cwd        string `json:"cwd"`
	MCPServers []any  `json:"mcpServers"`
}

type acpPromptParams struct {
	SessionID string     `json:"sessionId"`
	Prompt    []acpBlock `json:"prompt"`
}

// acpBlock is one content block of a prompt: text, an image (base64 data)
// or a resource_link (a file the agent reads itself). Every agent takes
// text and resource_link; images only where initialize declared
// promptCapabilities.image.
type acpBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"` // base64 in JSON, as ACP's image block wants
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
}

// acpPromptBlocks are the blocks of a run's opening prompt: the text
// (Prompt, which always names the attachments: AttachmentNote, so an
// agent that takes no image still reads them from the work tree); then
// each image
// attachment as an image block when the agent takes images, and every
// other attachment as a resource_link to its file. Attachment data never
// goes into the text.
func acpPromptBlocks(text string, atts []Attachment, images bool) []acpBlock {
	blocks := []acpBlock{{Type: "text", Text: text}}
	for _, a := range atts {
		if images && a.IsImage() && len(a.Data) > 0 {
			blocks = append(blocks, acpBlock{Type: "image", MimeType: a.MediaType, Data: a.Data})
			continue
		}
		if path.IsAbs(a.Path) {
			blocks = append(blocks, acpBlock{Type: "resource_link", URI: (&url.URL{Scheme: "file", Path: a.Path}).String(), Name: a.Name, MimeType: a.MediaType})
		}
	}
	return blocks
}

// acpInitAnswered tells whether line is the agent's response to initialize
// (a result or an error): the handshake a generic agent must complete in
// time (see ACPAdapter).
func acpInitAnswered(line []byte) bool {
	if !isACP(line) {
		return false
	}
	var m rpcMessage
	return json.Unmarshal(line, &m) == nil && m.Method == "" && rpcID(m.ID) == fmt.Sprint(acpInitID) && (m.Error != nil || len(m.Result) > 0)
}

// acpDialogue is the client side of one ACP run: it answers initialize with
// session/new (or session/load) and that with the prompt, and remembers the
// session id for later messages. React runs on the runner's line callback,
// Interrupt and UserMessage on other goroutines: mu guards the state.
type acpDialogue struct {
	cwd    string
	resume string
	prompt string
	atts   []Attachment

	mu      sync.Mutex
	session string
	nextID  int
	// turn is the id of the session/prompt whose turn runs (0: none). An
	// agent runs one turn at a time: a message of the user waits for the
	// turn's end and is then a turn of its own (Traits.Steer SteerTurn).
	turn int
	// images: initialize declared promptCapabilities.image.
	images bool
}

// newACPDialogue starts the dialogue of task's run. Its prompt is the
// one-shot prompt, not TwoWayPrompt: ACP has no question tool, so a question
// is the final message's QUESTION: line, answered by a run that loads the
// session again (Task.ResumeID).
func newACPDialogue(task Task) *acpDialogue {
	return &acpDialogue{cwd: task.dir(), resume: task.ResumeID, prompt: Prompt(task), atts: task.Attachments, nextID: acpFirstPromptID}
}

// React implements Dialogue.
func (d *acpDialogue) React(line []byte) [][]byte {
	if !isACP(line) {
		return nil
	}
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return nil // requests and notifications are the parser's
	}
	d.mu.Lock()
	if d.turn != 0 && rpcID(m.ID) == fmt.Sprint(d.turn) {
		d.turn = 0 // the turn ended (a stopReason, or an error)
	}
	d.mu.Unlock()
	if m.Error != nil || len(m.Result) == 0 {
		return nil // errors end the run in the parser
	}
	switch rpcID(m.ID) {
	case fmt.Sprint(acpInitID):
		var r struct {
			AgentCapabilities struct {
				PromptCapabilities struct {
					Image bool `json:"image"`
				} `json:"promptCapabilities"`
			} `json:"agentCapabilities"`
		}
		_ = json.Unmarshal(m.Result, &r) // no capabilities: text and links only
		d.mu.Lock()
		d.images = r.AgentCapabilities.PromptCapabilities.Image
		d.mu.Unlock()
		p := acpSessionParams{Cwd: d.cwd, MCPServers: []any{}}
		method := "session/new"
		if d.resume != "" {
			p.SessionID, method = d.resume, "session/load"
		}
		if msg, err := acpRequest(acpSessionID, method, p); err == nil {
			return [][]byte{msg}
		}
	case fmt.Sprint(acpSessionID):
		var r struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Result, &r) // session/load answers null
		id := d.resume
		if d.resume == "" {
			id = r.SessionID
		}
		if id == "" {
			return nil // the parser reports a session/new without a session
		}
		d.mu.Lock()
		d.session = id
		images := d.images
		d.mu.Unlock()
		if msg, err := d.send(acpPromptBlocks(d.prompt, d.atts, images)); err == nil {
			return [][]byte{msg}
		}
	}
	return nil
}

// Interrupt implements Dialogue: session/cancel; the agent ends the turn
// with stopReason "cancelled".
func (d *acpDialogue) Interrupt() ([]byte, error) {
	d.mu.Lock()
	id := d.session
	d.mu.Unlock()
	if id == "" {
		return nil, fmt.Errorf("harness: acp interrupt: %w: no session yet", ErrCannotReply)
	}
	return acpNotification(acpMethodCancel, map[string]string{"sessionId": id})
}

// UserMessage implements Dialogue: a session/prompt once the running turn
// ended (ErrCannotReply until then: the run tries again).
func (d *acpDialogue) UserMessage(text string) ([]byte, error) {
	return d.send([]acpBlock{{Type: "text", Text: text}})
}

// send is a session/prompt of blocks in the dialogue's session, which
// starts a turn; there is none while a turn runs.
func (d *acpDialogue) send(blocks []acpBlock) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.session == "":
		return nil, fmt.Errorf("harness: acp prompt: %w: no session yet", ErrCannotReply)
	case d.turn != 0:
		return nil, fmt.Errorf("harness: acp prompt: %w: a turn is running", ErrCannotReply)
	}
	msg, err := acpRequest(d.nextID, "session/prompt", acpPromptParams{SessionID: d.session, Prompt: blocks})
	if err != nil {
		return nil, err
	}
	d.turn = d.nextID
	d.nextID++
	return msg, nil
}

// acpOption is one option of a permission request.
type acpOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// acpPermissionParams are session/request_permission's params.
type acpPermissionParams struct {
	SessionID string      `json:"sessionId"`
	Options   []acpOption `json:"options"`
	ToolCall  acpToolCall `json:"toolCall"`
}

// acpToolCall is a tool_call, a tool_call_update or a permission request's
// toolCall.
type acpToolCall struct {
	ToolCallID string                  `json:"toolCallId"`
	Status     string                  `json:"status"`
	Title      string                  `json:"title"`
	Kind       string                  `json:"kind"`
	Content    []acpToolContent        `json:"content"`
	Locations  []struct{ Path string } `json:"locations"`
	RawInput   json.RawMessage         `json:"rawInput"`
}

// acpToolContent is one item of a tool call's content: text ("content")
// or a diff.
type acpToolContent struct {
	Type    string  `json:"type"`
	Content acpText `json:"content"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

// acpAction is what a tool call of kind does (ACP's ToolKind).
func acpAction(kind string) Action {
	switch kind {
	case "execute":
		return ActionShell
	case "edit", "move":
		return ActionEdit
	case "delete":
		return ActionDelete
	case "read", "search":
		return ActionRead
	case "fetch":
		return ActionFetch
	case "think":
		return ActionInternal // Gemini: a sub-agent, whose tool calls ask for themselves
	}
	return ActionOther // "other", "switch_mode" (which may leave the approval mode), unknown kinds
}

// acpToolName is the tool the owner is shown: ACP names no tool, only its
// kind; the shell and file kinds get the words the chat knows.
func acpToolName(tc acpToolCall) string {
	switch tc.Kind {
	case "execute":
		return "shell"
	case "edit", "delete", "move", "read", "search", "fetch", "think":
		return tc.Kind
	}
	if t := strings.TrimSpace(tc.Title); t != "" {
		return capString(t, 200)
	}
	return "other"
}

// acpCommand is a shell tool call's command line: rawInput.command where
// the CLI sends its tool's input (Qwen Code), otherwise the title, which
// Gemini CLI's shell tool sets to the command alone.
func acpCommand(tc acpToolCall) string {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(tc.RawInput, &in) == nil && in.Command != "" {
		return in.Command
	}
	return tc.Title
}

// acpEditPath is the file an edit tool call writes: its diff's path, its
// first location, or rawInput's file_path.
func acpEditPath(tc acpToolCall) string {
	for _, c := range tc.Content {
		if c.Type == "diff" && c.Path != "" {
			return c.Path
		}
	}
	for _, l := range tc.Locations {
		if l.Path != "" {
			return l.Path
		}
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(tc.RawInput, &in)
	return in.FilePath
}

// acpDiff is a compact diff of a tool call's diff content. The CLIs send
// whole files (oldText, newText), so the lines both share at the start and
// the end are left out.
func acpDiff(tc acpToolCall) string {
	var d diffBuilder
	for _, c := range tc.Content {
		if c.Type != "diff" {
			continue
		}
		old := ""
		if c.OldText != nil {
			old = *c.OldText
		}
		o, n := trimCommonLines(old, c.NewText)
		d.edit(o, n)
	}
	return d.String()
}

// trimCommonLines drops the lines old and new share at their start and end.
func trimCommonLines(old, new string) (string, string) {
	if old == "" {
		return "", new
	}
	a, b := strings.SplitAfter(old, "\n"), strings.SplitAfter(new, "\n")
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return strings.Join(a[i:len(a)-j], ""), strings.Join(b[i:len(b)-j], "")
}

// acpPermission reads a session/request_permission request whose id is id.
func acpPermission(id string, params json.RawMessage) Event {
	r := Request{ID: id, Control: acpMethodPermission, NoReason: true}
	if len(params) > maxRequestInputBytes {
		return badRequest(r, fmt.Sprintf("a permission request of %d bytes, too large to relay", len(params)))
	}
	var p acpPermissionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return badRequest(r, "a permission request whose params are not readable: "+capString(err.Error(), 200))
	}
	r.Session, r.ToolUseID = p.SessionID, p.ToolCall.ToolCallID
	if len(p.Options) == 0 || p.SessionID == "" {
		return badRequest(r, "a permission request without a session or options")
	}
	tc := p.ToolCall
	r.Tool, r.Action = acpToolName(tc), acpAction(tc.Kind)
	r.Input = json.RawMessage(bytes.Clone(params))
	// The fingerprint leaves out the call's id and status, which differ
	// between two asks of the same thing.
	same, _ := json.Marshal(struct {
		Kind     string           `json:"kind"`
		Title    string           `json:"title"`
		Content  []acpToolContent `json:"content"`
		RawInput json.RawMessage  `json:"rawInput,omitempty"`
	}{tc.Kind, tc.Title, tc.Content, tc.RawInput})
	r.Fingerprint = fingerprint(r.Tool, same)
	switch r.Action {
	case ActionShell:
		r.Command = acpCommand(tc)
	case ActionEdit, ActionDelete:
		r.Path, r.Diff = acpEditPath(tc), acpDiff(tc)
	case ActionRead:
		r.Path = acpEditPath(tc)
	}
	for _, c := range tc.Content {
		if c.Type == "content" && c.Content.Type == "text" && r.Reason == "" {
			r.Reason = capString(c.Content.Text, 1024)
		}
	}
	return Event{Kind: KindPermission, Tool: r.Tool, ToolID: r.ToolUseID, Command: r.Command, Path: r.Path, Request: &r}
}

// acpOptionOf returns the id of the first option of one of kinds (in the
// order of kinds) that request r (its params in r.Input) offered.
func acpOptionOf(r Request, kinds ...string) string {
	var p acpPermissionParams
	if json.Unmarshal(r.Input, &p) != nil {
		return ""
	}
	for _, k := range kinds {
		for _, o := range p.Options {
			if o.Kind == k && o.OptionID != "" {
				return o.OptionID
			}
		}
	}
	return ""
}

type acpOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

func acpSelected(r Request, outcome acpOutcome) ([]byte, error) {
	return jsonLine(rpcResult{JSONRPC: "2.0", ID: json.RawMessage(r.ID), Result: map[string]acpOutcome{"outcome": outcome}})
}

// acpAllow selects the request's allow_once option.
func acpAllow(name Name, r Request) ([]byte, error) {
	if r.ID == "" || r.Control != acpMethodPermission {
		return nil, fmt.Errorf("harness: %s allow %s: %w", name, r.Tool, ErrCannotReply)
	}
	opt := acpOptionOf(r, "allow_once")
	if opt == "" {
		return nil, fmt.Errorf("harness: %s allow %s: %w: no allow_once option", name, r.Tool, ErrCannotReply)
	}
	return acpSelected(r, acpOutcome{Outcome: "selected", OptionID: opt})
}

// acpDeny refuses r: the reject_once option of a permission request, or
// the "cancelled" outcome when there is none to select (both CLIs treat it
// as a rejection); a request of a method Fetch does not serve gets "Method
// not found". ACP has nowhere to put reason: it is not sent.
func acpDeny(name Name, r Request, stop bool) ([]byte, error) {
	if r.ID == "" {
		return nil, fmt.Errorf("harness: %s deny: %w: the request has no id", name, ErrCannotReply)
	}
	var msg []byte
	var err error
	switch {
	case r.Control != acpMethodPermission:
		msg, err = jsonLine(rpcError{JSONRPC: "2.0", ID: json.RawMessage(r.ID),
			Error: rpcErrorBody{Code: rpcMethodNotFound, Message: "Method not found", Data: map[string]string{"method": r.Control}}})
	default:
		out := acpOutcome{Outcome: "cancelled"}
		if opt := acpOptionOf(r, "reject_once"); opt != "" {
			out = acpOutcome{Outcome: "selected", OptionID: opt}
		}
		msg, err = acpSelected(r, out)
	}
	if err != nil || !stop {
		return msg, err
	}
	if r.Session == "" {
		return nil, fmt.Errorf("harness: %s deny and stop: %w: the request names no session", name, ErrCannotReply)
	}
	cancel, err := acpNotification(acpMethodCancel, map[string]string{"sessionId": r.Session})
	if err != nil {
		return nil, err
	}
	return append(msg, cancel...), nil
}

// acpParser reads an ACP run's stdout into events.
type acpParser struct {
	resume string // the session being loaded: its replayed history is not this run's
	// loading: session/load has not answered yet.
	loading bool
	sessionID
	tools map[string]pendingTool
	streamedText
}

func newACPParser(task Task) *acpParser {
	return &acpParser{resume: task.ResumeID, loading: task.ResumeID != "", tools: make(map[string]pendingTool)}
}

// Parse reads one JSON-RPC line; the caller checked isACP.
func (p *acpParser) Parse(line []byte, emit func(Event)) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		p.flushText(emit)
		emit(rawEvent(line))
		return
	}
	id := rpcID(m.ID)
	switch {
	case m.Method == acpMethodUpdate && len(m.ID) == 0:
		if !p.loading {
			p.update(m.Params, emit)
		}
	case m.Method != "" && len(m.ID) == 0:
		p.flushText(emit)
		emit(rawEvent(line)) // a notification Fetch does not know
	case m.Method != "":
		p.flushText(emit)
		switch {
		case id == "":
			emit(badRequest(Request{Control: m.Method}, "a request with an id that is neither a number nor a string: "+capString(string(line), 512)))
		case m.Method == acpMethodPermission:
			ev := acpPermission(id, m.Params)
			if t := ev.Request; ev.Kind == KindPermission {
				p.tools[t.ToolUseID] = pendingTool{name: t.Tool, shell: t.Action == ActionShell, path: t.Path}
			}
			emit(ev)
		default:
			emit(badRequest(Request{ID: id, Control: m.Method}, fmt.Sprintf("the CLI asked for %q, which Fetch does not serve", capString(m.Method, 100))))
		}
	default:
		p.response(id, m, emit)
	}
}

// Flush implements Parser.
func (p *acpParser) Flush(emit func(Event)) { p.flushText(emit) }

// response reads the response to one of Fetch's requests.
func (p *acpParser) response(id string, m rpcMessage, emit func(Event)) {
	p.flushText(emit)
	if m.Error != nil {
		what := "the prompt"
		switch id {
		case fmt.Sprint(acpInitID):
			what = "initialize"
		case fmt.Sprint(acpSessionID):
			what = "starting the session"
		}
		msg := strings.TrimSpace(m.Error.Message)
		if len(m.Error.Data) > 0 && string(m.Error.Data) != "null" {
			msg += " " + capString(string(m.Error.Data), 512)
		}
		p.loading = false
		emit(Event{Kind: KindResult, Text: capText(fmt.Sprintf("%s failed: %s (code %d)", what, msg, m.Error.Code))})
		return
	}
	switch id {
	case fmt.Sprint(acpInitID):
		return
	case fmt.Sprint(acpSessionID):
		p.loading = false
		var r struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Result, &r)
		if p.resume != "" {
			r.SessionID = p.resume
		}
		if r.SessionID == "" {
			emit(Event{Kind: KindResult, Text: "the CLI started no session (session/new answered without a sessionId)"})
			return
		}
		p.sessionFrom(r.SessionID, emit)
		return
	}
	var r struct {
		StopReason string `json:"stopReason"`
		Meta       struct {
			Quota struct {
				TokenCount struct {
					InputTokens  int64 `json:"input_tokens"`
					OutputTokens int64 `json:"output_tokens"`
				} `json:"token_count"`
			} `json:"quota"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.StopReason == "" {
		emit(rawEvent(mustLine(m)))
		return
	}
	// Gemini CLI reports the turn's tokens in _meta.quota, naming no
	// model: the cost is unknown, unless a budget asks to price such
	// tokens as the dearest model (price.Table.PricingUnknown).
	if tc := r.Meta.Quota.TokenCount; tc.InputTokens != 0 || tc.OutputTokens != 0 {
		u := withPrice(Usage{InputTokens: tc.InputTokens, OutputTokens: tc.OutputTokens}, "", false)
		emit(Event{Kind: KindUsage, Usage: &u})
	}
	if r.StopReason == "end_turn" {
		emit(Event{Kind: KindResult, Success: true, Text: capText(p.segment.String())})
		return
	}
	text := "the CLI ended its turn: " + r.StopReason
	if r.StopReason == "cancelled" {
		text = "interrupted: the turn was cancelled"
	}
	emit(Event{Kind: KindResult, Text: text})
}

// mustLine is m as a JSON line, for a raw event.
func mustLine(m rpcMessage) []byte {
	b, _ := json.Marshal(m)
	return b
}

// update reads a session/update notification.
func (p *acpParser) update(params json.RawMessage, emit func(Event)) {
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		// Content is one block in a message chunk, a list in a tool call.
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(params, &n) != nil || json.Unmarshal(n.Update, &u) != nil {
		p.flushText(emit)
		emit(Event{Kind: KindRaw, Raw: capInput(params)})
		return
	}
	switch u.SessionUpdate {
	case "agent_message_chunk":
		var c acpText
		if json.Unmarshal(u.Content, &c) == nil && c.Type == "text" {
			p.pending.WriteString(c.Text)
		}
		return
	case "agent_thought_chunk", "user_message_chunk", "available_commands_update", "current_mode_update", "plan":
		return // thinking, the prompt echoed, the CLI's own menus
	}
	p.flushText(emit)
	var tc acpToolCall
	_ = json.Unmarshal(n.Update, &tc)
	switch u.SessionUpdate {
	case "tool_call":
		p.segment.reset()
		p.toolCall(tc, emit)
	case "tool_call_update":
		p.segment.reset()
		p.toolUpdate(tc, emit)
	default:
		emit(Event{Kind: KindRaw, Raw: capInput(n.Update)})
	}
}

// toolCall reads a tool call the CLI runs without asking (or reports
// before asking).
func (p *acpParser) toolCall(tc acpToolCall, emit func(Event)) {
	t := pendingTool{name: acpToolName(tc)}
	switch acpAction(tc.Kind) {
	case ActionShell:
		t.shell = true
		p.tools[tc.ToolCallID] = t
		emit(Event{Kind: KindCommand, Tool: t.name, ToolID: tc.ToolCallID, Command: acpCommand(tc)})
		return
	case ActionEdit, ActionDelete:
		t.path = acpEditPath(tc)
	}
	p.tools[tc.ToolCallID] = t
	in := tc.RawInput
	if len(in) == 0 {
		in, _ = json.Marshal(map[string]string{"title": tc.Title})
	}
	emit(Event{Kind: KindToolUse, Tool: t.name, ToolID: tc.ToolCallID, Input: capInput(in)})
}

// toolUpdate reads how a tool call ended.
func (p *acpParser) toolUpdate(tc acpToolCall, emit func(Event)) {
	t, known := p.tools[tc.ToolCallID]
	if !known {
		t = pendingTool{name: acpToolName(tc)}
		if a := acpAction(tc.Kind); a == ActionEdit || a == ActionDelete {
			t.path = acpEditPath(tc)
		}
	}
	switch tc.Status {
	case "completed":
		delete(p.tools, tc.ToolCallID)
		if t.path == "" {
			t.path = acpEditPath(acpToolCall{Content: tc.Content})
		}
		if t.path != "" && !t.shell {
			emit(Event{Kind: KindFileChanged, Tool: t.name, ToolID: tc.ToolCallID, Path: filepath.Clean(t.path)})
		}
	case "failed":
		delete(p.tools, tc.ToolCallID)
		var msg []string
		for _, c := range tc.Content {
			if c.Type == "content" && c.Content.Text != "" {
				msg = append(msg, c.Content.Text)
			}
		}
		emit(Event{Kind: KindError, Tool: t.name, ToolID: tc.ToolCallID, Text: capText(strings.Join(msg, "\n"))})
	}
}

// acpTwoWay is the two-way part every ACP adapter shares (Gemini CLI, Qwen
// Code, Copilot CLI, OpenCode, the generic harness): none has a plan mode
// Fetch drives over it (Gemini offers a "plan" session mode, but its plan does not come back
// as a request to approve).
type acpTwoWay struct{}

// acpTraits are the traits of an ACP adapter's CLI: base (what is its
// own) made two-way, relaying permission requests, the only requests ACP
// has.
func acpTraits(base Traits) Traits {
	base.TwoWay, base.Relays, base.Steer = true, []Kind{KindPermission}, SteerTurn
	return base
}

// checkMode refuses a plan-mode run.
func (acpTwoWay) checkMode(task Task, mode TwoWayMode) error {
	if err := validate(task); err != nil {
		return err
	}
	switch {
	case mode == ModePlan:
		return fmt.Errorf("%w over ACP", ErrNoPlanMode)
	case mode != ModeWork:
		return fmt.Errorf("%w: unknown mode %q", ErrInvalidTask, mode)
	case task.ReadOnly:
		return fmt.Errorf("%w over ACP", ErrNoReadOnly)
	}
	return nil
}

// Opening implements TwoWay: the initialize request; the dialogue sends
// the rest once the CLI answers.
func (a acpTwoWay) Opening(task Task, mode TwoWayMode) ([][]byte, error) {
	if err := a.checkMode(task, mode); err != nil {
		return nil, fmt.Errorf("harness: acp opening: %w", err)
	}
	return acpOpening()
}

// NewDialogue implements Dialogues.
func (a acpTwoWay) NewDialogue(task Task, mode TwoWayMode) (Dialogue, error) {
	if err := a.checkMode(task, mode); err != nil {
		return nil, fmt.Errorf("harness: acp dialogue: %w", err)
	}
	return newACPDialogue(task), nil
}

// Allow implements TwoWay.
func (acpTwoWay) Allow(r Request) ([]byte, error) { return acpAllow("acp", r) }

// Deny implements TwoWay. The reason is not sent: ACP has no field for it.
func (acpTwoWay) Deny(r Request, _ string) ([]byte, error) { return acpDeny("acp", r, false) }

// DenyAndStop implements TwoWay: the rejection, then session/cancel.
func (acpTwoWay) DenyAndStop(r Request, _ string) ([]byte, error) { return acpDeny("acp", r, true) }

// Answer implements TwoWay: ACP has no questions.
func (acpTwoWay) Answer(r Request, _ []string) ([]byte, error) {
	return nil, fmt.Errorf("harness: acp answer %s: %w: ACP has no questions", r.Tool, ErrCannotReply)
}

// Interrupt implements TwoWay. session/cancel names the session, which
// only the run's Dialogue knows.
func (acpTwoWay) Interrupt(string) ([]byte, error) {
	return nil, fmt.Errorf("harness: acp interrupt: %w: use the run's Dialogue, which knows the session", ErrCannotReply)
}

// UserMessage implements TwoWay; like Interrupt, it needs the Dialogue.
func (acpTwoWay) UserMessage(string) ([]byte, error) {
	return nil, fmt.Errorf("harness: acp message: %w: use the run's Dialogue, which knows the session", ErrCannotReply)
}
