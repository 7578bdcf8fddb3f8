package harness

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
)

// Codex's two-way mode, `codex app-server`: JSON-RPC 2.0 without the
// "jsonrpc" field, one message a line, on the CLI's stdin and stdout. What
// each message looks like, where it was read and what is not confirmed for
// the pinned 0.169.0 is in testdata/codex-appserver/README.md; the fixtures
// there are what the golden tests parse and write.
//
// The client (Fetch) sends initialize; once it is answered, the initialized
// notification and thread/start (thread/resume to resume); once that is
// answered, turn/start with the prompt and the thread's id. A codexDialogue
// does this, reacting to the responses. The thread runs with sandbox
// danger-full-access (Codex's own sandbox fails in containers: the kennel is
// the sandbox) and approval policy "untrusted", under which Codex asks
// before every command that is not on its known-safe (read-only) list and
// before every patch (core exec_policy.rs and safety.rs at 0.125.0; under
// "on-request" with full access it asks for neither). It asks with server
// requests item/commandExecution/requestApproval and
// item/fileChange/requestApproval, and asks the user questions with
// item/tool/requestUserInput, which Default mode offers only with the
// feature default_mode_request_user_input, set on thread/start.
//
// A denial is {"decision":"decline"}: the protocol has no field for its
// reason (NoReason). There is no plan mode: Codex's plan collaboration mode
// is behind experimentalApi.

// Client request ids: the handshake's are fixed, so the parser and the
// dialogue know which response is which; later requests (turn/interrupt,
// turn/steer, a further turn/start) count up from codexFirstLaterID.
const (
	codexInitID       = 1
	codexThreadID     = 2 // thread/start or thread/resume
	codexTurnID       = 3 // the first turn/start
	codexFirstLaterID = 4
)

// Codex app-server method names.
const (
	codexMethodCommandApproval = "item/commandExecution/requestApproval"
	codexMethodFileApproval    = "item/fileChange/requestApproval"
	codexMethodUserInput       = "item/tool/requestUserInput"
)

// The thread settings of a two-way run.
const (
	codexApprovalPolicy = "untrusted"
	codexSandbox        = "danger-full-access"
	// codexQuestionsFeature lets request_user_input run in Default mode
	// (codex-rs/app-server/tests/suite/v2/turn_start.rs at 0.125.0).
	codexQuestionsFeature = "features.default_mode_request_user_input"
)

// codexTwoWayInstructions follow the goal of a two-way Codex run: they
// name Codex's question tool.
//
//go:embed prompt_twoway_codex.md
var codexTwoWayInstructions string

// isCodexRPC tells whether line is an app-server message: a JSON object
// with an id or a method, and neither the "type" of `codex exec --json`
// nor a "jsonrpc" field.
func isCodexRPC(line []byte) bool {
	var head struct {
		Type    json.RawMessage `json:"type"`
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	if json.Unmarshal(line, &head) != nil {
		return false
	}
	return head.Type == nil && head.JSONRPC == nil && (head.Method != nil || head.ID != nil)
}

// looksLikeCodexRequest tells whether a line that is not JSON tried to be
// one of the app-server's requests.
func looksLikeCodexRequest(line []byte) bool {
	return bytes.Contains(line, []byte(`"method"`)) && bytes.Contains(line, []byte(`"id"`)) && !json.Valid(line)
}

// codexTextInput is an item of turn/start's and turn/steer's input: text,
// or a picture in the kennel (localImage, by path).
type codexTextInput struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	Path string `json:"path,omitempty"`
}

// codexInput is a prompt's input: its text, then a localImage item per
// image attachment.
func codexInput(text string, atts []Attachment) []codexTextInput {
	in := []codexTextInput{{Type: "text", Text: text}}
	for _, a := range atts {
		if a.IsImage() && a.Path != "" {
			in = append(in, codexTextInput{Type: "localImage", Path: a.Path})
		}
	}
	return in
}

// codexCheckMode refuses what Codex cannot do two-way.
func codexCheckMode(task Task, mode TwoWayMode) error {
	if err := validate(task); err != nil {
		return err
	}
	switch {
	case mode == ModePlan:
		return fmt.Errorf("%w over app-server: its plan mode is experimental API", ErrNoPlanMode)
	case mode != ModeWork:
		return fmt.Errorf("%w: unknown mode %q", ErrInvalidTask, mode)
	case task.ReadOnly:
		return fmt.Errorf("%w: its read-only sandbox fails in containers", ErrNoReadOnly)
	}
	return nil
}

// TwoWayInvocation implements TwoWay: `codex app-server` on stdio, with the
// one-shot run's keys. The model, the sandbox and the approval policy go
// in thread/start.
func (CodexAdapter) TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error) {
	if err := codexCheckMode(task, mode); err != nil {
		return Invocation{}, fmt.Errorf("harness: codex two-way invocation: %w", err)
	}
	env := buildEnv(nil, creds, keyNames(CodexAdapter{}.Keys())...)
	return Invocation{Argv: []string{"codex", "app-server"}, Env: env}, nil
}

// Opening implements TwoWay: the initialize request; the dialogue sends
// the rest once the CLI answers.
func (CodexAdapter) Opening(task Task, mode TwoWayMode) ([][]byte, error) {
	if err := codexCheckMode(task, mode); err != nil {
		return nil, fmt.Errorf("harness: codex opening: %w", err)
	}
	init, err := jsonLine(rpcOut{ID: codexInitID, Method: "initialize", Params: map[string]any{
		"clientInfo": map[string]string{"name": "fetch", "title": "Fetch", "version": "1"},
	}})
	if err != nil {
		return nil, err
	}
	return [][]byte{init}, nil
}

// NewDialogue implements Dialogues.
func (CodexAdapter) NewDialogue(task Task, mode TwoWayMode) (Dialogue, error) {
	if err := codexCheckMode(task, mode); err != nil {
		return nil, fmt.Errorf("harness: codex dialogue: %w", err)
	}
	prompt := task.Goal + "\n\n" + codexTwoWayInstructions
	if task.ResumeID != "" && task.Answer != "" {
		prompt = task.Answer
	}
	return &codexDialogue{cwd: task.dir(), model: task.Model, resume: task.ResumeID, prompt: prompt, atts: task.Attachments, nextID: codexFirstLaterID}, nil
}

// codexDialogue is the client side of one app-server run. React runs on
// the runner's line callback, Interrupt and UserMessage on other
// goroutines: mu guards the state.
type codexDialogue struct {
	cwd, model, resume, prompt string
	atts                       []Attachment

	mu      sync.Mutex
	thread  string
	turn    string // the running turn, "" between turns
	nextID  int
	started bool // the first turn/start was sent
	ran     bool // a turn's id was seen: messages may follow
}

// codexThreadParams are thread/start's params (and, with threadId,
// thread/resume's, which accepts the same overrides).
type codexThreadParams struct {
	ThreadID       string         `json:"threadId,omitempty"`
	Model          string         `json:"model,omitempty"`
	Cwd            string         `json:"cwd"`
	ApprovalPolicy string         `json:"approvalPolicy"`
	Sandbox        string         `json:"sandbox"`
	Config         map[string]any `json:"config"`
}

// React implements Dialogue.
func (d *codexDialogue) React(line []byte) [][]byte {
	if !isCodexRPC(line) {
		return nil
	}
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	switch {
	case m.Method == "turn/started":
		var n struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		_ = json.Unmarshal(m.Params, &n)
		d.setTurn(n.Turn.ID)
		return nil
	case m.Method == "turn/completed":
		d.setTurn("")
		return nil
	case m.Method != "" || m.Error != nil || len(m.Result) == 0:
		return nil // requests and the rest are the parser's; errors end the run there
	}
	switch rpcID(m.ID) {
	case fmt.Sprint(codexInitID):
		initialized, err := jsonLine(rpcOut{Method: "initialized"})
		if err != nil {
			return nil
		}
		p := codexThreadParams{Model: d.model, Cwd: d.cwd, ApprovalPolicy: codexApprovalPolicy, Sandbox: codexSandbox,
			Config: map[string]any{codexQuestionsFeature: true}}
		method := "thread/start"
		if d.resume != "" {
			p.ThreadID, method = d.resume, "thread/resume"
		}
		start, err := jsonLine(rpcOut{ID: codexThreadID, Method: method, Params: p})
		if err != nil {
			return nil
		}
		return [][]byte{initialized, start}
	case fmt.Sprint(codexThreadID):
		var r struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		_ = json.Unmarshal(m.Result, &r)
		if r.Thread.ID == "" {
			return nil // the parser reports a thread without an id
		}
		d.mu.Lock()
		d.thread, d.started = r.Thread.ID, true
		d.mu.Unlock()
		msg, err := jsonLine(rpcOut{ID: codexTurnID, Method: "turn/start", Params: map[string]any{
			"threadId": r.Thread.ID, "input": codexInput(d.prompt, d.atts)}})
		if err != nil {
			return nil
		}
		return [][]byte{msg}
	case fmt.Sprint(codexTurnID):
		var r struct {
			Turn struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"turn"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.Turn.Status == "inProgress" {
			d.mu.Lock()
			if d.turn == "" {
				d.turn = r.Turn.ID
			}
			d.ran = true
			d.mu.Unlock()
		}
	}
	return nil
}

func (d *codexDialogue) setTurn(id string) {
	d.mu.Lock()
	d.turn = id
	d.ran = d.ran || id != ""
	d.mu.Unlock()
}

// ids returns the thread, the running turn and, when there is a thread
// (and a running turn, if needTurn), a fresh request id.
func (d *codexDialogue) ids(needTurn bool) (thread, turn string, id int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.thread != "" && (d.turn != "" || !needTurn) {
		id = d.nextID
		d.nextID++
	}
	return d.thread, d.turn, id
}

// Interrupt implements Dialogue: turn/interrupt with the running turn's
// ids; the turn then completes with status "interrupted".
func (d *codexDialogue) Interrupt() ([]byte, error) {
	thread, turn, id := d.ids(true)
	if thread == "" || turn == "" {
		return nil, fmt.Errorf("harness: codex interrupt: %w: no turn is running", ErrCannotReply)
	}
	return jsonLine(rpcOut{ID: id, Method: "turn/interrupt", Params: map[string]string{"threadId": thread, "turnId": turn}})
}

// UserMessage implements Dialogue: turn/steer into the running turn, or a
// new turn/start between turns.
func (d *codexDialogue) UserMessage(text string) ([]byte, error) {
	d.mu.Lock()
	ran := d.ran
	d.mu.Unlock()
	if !ran {
		// Before the first turn runs, a message would start a second
		// one: it waits (RunTwoWay tries again).
		return nil, fmt.Errorf("harness: codex message: %w: no turn yet", ErrCannotReply)
	}
	thread, turn, id := d.ids(false)
	if thread == "" {
		return nil, fmt.Errorf("harness: codex message: %w: no thread yet", ErrCannotReply)
	}
	input := []codexTextInput{{Type: "text", Text: text}}
	if turn != "" {
		return jsonLine(rpcOut{ID: id, Method: "turn/steer", Params: map[string]any{"threadId": thread, "input": input, "expectedTurnId": turn}})
	}
	return jsonLine(rpcOut{ID: id, Method: "turn/start", Params: map[string]any{"threadId": thread, "input": input}})
}

// Interrupt implements TwoWay. turn/interrupt names the thread and the
// turn, which only the run's Dialogue knows.
func (CodexAdapter) Interrupt(string) ([]byte, error) {
	return nil, fmt.Errorf("harness: codex interrupt: %w: use the run's Dialogue, which knows the turn", ErrCannotReply)
}

// UserMessage implements TwoWay; like Interrupt, it needs the Dialogue.
func (CodexAdapter) UserMessage(string) ([]byte, error) {
	return nil, fmt.Errorf("harness: codex message: %w: use the run's Dialogue, which knows the thread", ErrCannotReply)
}

// codexDecision is the response to an approval request.
func codexDecision(r Request, decision string) ([]byte, error) {
	return jsonLine(rpcResult{ID: json.RawMessage(r.ID), Result: map[string]string{"decision": decision}})
}

func codexIsApproval(control string) bool {
	return control == codexMethodCommandApproval || control == codexMethodFileApproval
}

// Allow implements TwoWay: decision "accept" (this once; Fetch's own
// policy remembers what the owner allows for the task).
func (CodexAdapter) Allow(r Request) ([]byte, error) {
	if r.ID == "" || !codexIsApproval(r.Control) || len(r.Input) == 0 {
		return nil, fmt.Errorf("harness: codex allow %s: %w", r.Tool, ErrCannotReply)
	}
	return codexDecision(r, "accept")
}

// Deny implements TwoWay. An approval gets decision "decline" (Codex tells
// the model and the turn goes on; the reason has no field, so it is not
// sent), a question no answers, and a request of a method Fetch does not
// serve "Method not found".
func (a CodexAdapter) Deny(r Request, _ string) ([]byte, error) { return a.deny(r, false) }

// DenyAndStop implements TwoWay: decision "cancel", which also interrupts
// the turn; a question gets no answers and turn/interrupt.
func (a CodexAdapter) DenyAndStop(r Request, _ string) ([]byte, error) { return a.deny(r, true) }

func (CodexAdapter) deny(r Request, stop bool) ([]byte, error) {
	if r.ID == "" {
		return nil, fmt.Errorf("harness: codex deny: %w: the request has no id", ErrCannotReply)
	}
	switch {
	case codexIsApproval(r.Control) && stop:
		return codexDecision(r, "cancel")
	case codexIsApproval(r.Control):
		return codexDecision(r, "decline")
	case r.Control != codexMethodUserInput:
		return jsonLine(rpcError{ID: json.RawMessage(r.ID),
			Error: rpcErrorBody{Code: rpcMethodNotFound, Message: "Method not found", Data: map[string]string{"method": r.Control}}})
	}
	// No answers: what the app-server itself submits when it cannot ask
	// (bespoke_event_handling.rs at 0.125.0).
	msg, err := jsonLine(rpcResult{ID: json.RawMessage(r.ID), Result: map[string]any{"answers": map[string]any{}}})
	if err != nil || !stop {
		return msg, err
	}
	var p struct {
		ThreadID string `json:"threadId"`
		TurnID   string `json:"turnId"`
	}
	if json.Unmarshal(r.Input, &p) != nil || p.ThreadID == "" || p.TurnID == "" {
		return nil, fmt.Errorf("harness: codex deny and stop: %w: the question names no turn", ErrCannotReply)
	}
	// A string id: the adapter has no counter; the dialogue's are numbers.
	stopMsg, err := jsonLine(rpcOut{ID: "fetch-stop-" + r.ID, Method: "turn/interrupt", Params: map[string]string{"threadId": p.ThreadID, "turnId": p.TurnID}})
	if err != nil {
		return nil, err
	}
	return append(msg, stopMsg...), nil
}

// codexUserInputParams are item/tool/requestUserInput's params.
type codexUserInputParams struct {
	ThreadID  string `json:"threadId"`
	TurnID    string `json:"turnId"`
	ItemID    string `json:"itemId"`
	Questions []struct {
		ID       string `json:"id"`
		Header   string `json:"header"`
		Question string `json:"question"`
		IsOther  bool   `json:"isOther"`
		IsSecret bool   `json:"isSecret"`
		Options  []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// Answer implements TwoWay: {"answers": {question id: {"answers": [answer]}}}.
func (CodexAdapter) Answer(r Request, answers []string) ([]byte, error) {
	if r.ID == "" || r.Control != codexMethodUserInput || len(r.Input) == 0 {
		return nil, fmt.Errorf("harness: codex answer %s: %w", r.Tool, ErrCannotReply)
	}
	var p codexUserInputParams
	if err := json.Unmarshal(r.Input, &p); err != nil {
		return nil, fmt.Errorf("harness: codex answer: %w: the request's params are not readable", ErrCannotReply)
	}
	if len(answers) != len(p.Questions) || len(answers) != len(r.Questions) {
		return nil, fmt.Errorf("harness: codex answer: %d answers for %d questions: %w", len(answers), len(p.Questions), ErrCannotReply)
	}
	type answer struct {
		Answers []string `json:"answers"`
	}
	m := make(map[string]answer, len(answers))
	for i, q := range p.Questions {
		m[q.ID] = answer{Answers: []string{answers[i]}}
	}
	return jsonLine(rpcResult{ID: json.RawMessage(r.ID), Result: map[string]any{"answers": m}})
}

// isCodexAppLine tells the app-server's lines (Codex's two-way format)
// from those of `codex exec --json`.
func isCodexAppLine(line []byte) bool {
	return !isBlank(line) && (isCodexRPC(line) || looksLikeCodexRequest(line))
}

// codexAppItem is what the parser keeps of an item between item/started
// and item/completed: the approval requests name only its id.
type codexAppItem struct {
	command string
	changes []codexFileChange
}

// codexFileChange is one change of a fileChange item.
type codexFileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type     string `json:"type"`
		MovePath string `json:"move_path,omitempty"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

// codexAppThreadItem is a ThreadItem, as far as Fetch reads it.
type codexAppThreadItem struct {
	ID               string            `json:"id"`
	Type             string            `json:"type"`
	Text             string            `json:"text"`
	Command          string            `json:"command"`
	Status           string            `json:"status"`
	AggregatedOutput *string           `json:"aggregatedOutput"`
	ExitCode         *int              `json:"exitCode"`
	Changes          []codexFileChange `json:"changes"`
	Server           string            `json:"server"`
	Tool             string            `json:"tool"`
	Arguments        json.RawMessage   `json:"arguments"`
	Query            string            `json:"query"`
	Error            json.RawMessage   `json:"error"`
}

// codexTokens is a TokenUsageBreakdown.
type codexTokens struct {
	TotalTokens       int64 `json:"totalTokens"`
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
}

// codexAppParser reads `codex app-server`'s stdout into events.
type codexAppParser struct {
	sessionID
	model  string
	resume string
	items  map[string]codexAppItem
	deltas map[string]*strings.Builder // agentMessage deltas by item id
	last   string                      // the turn's last agent message
	// total is the thread's usage as last reported, reported what of it
	// went out in usage events: each turn reports what was added.
	total, reported codexTokens
}

func newCodexAppParser(task Task) *codexAppParser {
	return &codexAppParser{model: task.Model, resume: task.ResumeID, items: make(map[string]codexAppItem), deltas: make(map[string]*strings.Builder)}
}

// Codex notifications that carry nothing for the event model: status,
// streaming output Fetch reads whole from item/completed, reasoning,
// plans, rate limits.
var codexAppIgnored = map[string]bool{
	"turn/started": true, "thread/status/changed": true, "turn/diff/updated": true, "turn/plan/updated": true,
	"item/commandExecution/outputDelta": true, "item/fileChange/outputDelta": true, "item/commandExecution/terminalInteraction": true,
	"item/reasoning/summaryTextDelta": true, "item/reasoning/summaryPartAdded": true, "item/reasoning/textDelta": true,
	"item/plan/delta": true, "thread/name/updated": true, "item/mcpToolCall/progress": true,
	"mcpServer/startupStatus/updated": true, "thread/compacted": true, "skills/changed": true,
}

// Parse implements Parser; the caller checked isCodexRPC (or
// looksLikeCodexRequest).
func (p *codexAppParser) Parse(line []byte, emit func(Event)) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		emit(badRequest(Request{}, "a request that is not valid JSON: "+capString(string(line), 512)))
		return
	}
	switch {
	case m.Method != "" && len(m.ID) == 0:
		p.notification(m.Method, m.Params, line, emit)
	case m.Method != "":
		p.request(rpcID(m.ID), m.Method, m.Params, line, emit)
	default:
		p.response(rpcID(m.ID), m, line, emit)
	}
}

// Flush implements Parser: usage the run did not report at a turn's end
// (it was stopped) is reported now.
func (p *codexAppParser) Flush(emit func(Event)) { p.usage(emit) }

// usage reports the tokens added since the last report.
func (p *codexAppParser) usage(emit func(Event)) {
	d := codexTokens{
		InputTokens:       p.total.InputTokens - p.reported.InputTokens,
		CachedInputTokens: p.total.CachedInputTokens - p.reported.CachedInputTokens,
		OutputTokens:      p.total.OutputTokens - p.reported.OutputTokens,
	}
	if d.InputTokens <= 0 && d.OutputTokens <= 0 {
		return
	}
	p.reported = p.total
	u := withPrice(Usage{InputTokens: d.InputTokens, OutputTokens: d.OutputTokens, CacheReadTokens: d.CachedInputTokens}, codexModel(p.model), true)
	emit(Event{Kind: KindUsage, Usage: &u})
}

// response reads the response to one of Fetch's requests.
func (p *codexAppParser) response(id string, m rpcMessage, line []byte, emit func(Event)) {
	if m.Error != nil {
		msg := strings.TrimSpace(m.Error.Message)
		if len(m.Error.Data) > 0 && string(m.Error.Data) != "null" {
			msg += " " + capString(string(m.Error.Data), 512)
		}
		what := ""
		switch id {
		case fmt.Sprint(codexInitID):
			what = "initialize"
		case fmt.Sprint(codexThreadID):
			what = "starting the thread"
			if p.resume != "" {
				what = "resuming the thread"
			}
		case fmt.Sprint(codexTurnID):
			what = "starting the turn"
		}
		if what == "" {
			// turn/interrupt, turn/steer or a later turn/start: the run
			// goes on, or ends with turn/completed.
			emit(Event{Kind: KindError, Text: capText(fmt.Sprintf("request %s failed: %s (code %d)", id, msg, m.Error.Code))})
			return
		}
		emit(Event{Kind: KindResult, Text: capText(fmt.Sprintf("%s failed: %s (code %d)", what, msg, m.Error.Code))})
		return
	}
	if id != fmt.Sprint(codexThreadID) {
		return // initialize's, turn/start's, turn/interrupt's: nothing for events
	}
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.Thread.ID == "" {
		emit(Event{Kind: KindResult, Text: "the CLI started no thread (its answer has no thread id): " + capString(string(line), 512)})
		return
	}
	p.sessionFrom(r.Thread.ID, emit)
}

// notification reads one of the app-server's notifications.
func (p *codexAppParser) notification(method string, params json.RawMessage, line []byte, emit func(Event)) {
	switch method {
	case "account/rateLimits/updated":
		if ws := codexLimits(params); len(ws) > 0 {
			emit(Event{Kind: KindLimits, Limits: ws})
		}
	case "thread/started":
		var n struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		if json.Unmarshal(params, &n) == nil {
			p.sessionFrom(n.Thread.ID, emit)
		}
	case "item/started", "item/completed":
		var n struct {
			Item codexAppThreadItem `json:"item"`
		}
		if json.Unmarshal(params, &n) != nil || n.Item.Type == "" {
			emit(rawEvent(line))
			return
		}
		if method == "item/started" {
			p.itemStarted(n.Item, emit)
		} else {
			p.itemCompleted(n.Item, line, emit)
		}
	case "item/agentMessage/delta":
		var n struct {
			ItemID string `json:"itemId"`
			Delta  string `json:"delta"`
		}
		if json.Unmarshal(params, &n) != nil {
			return
		}
		b := p.deltas[n.ItemID]
		if b == nil {
			b = &strings.Builder{}
			p.deltas[n.ItemID] = b
		}
		if b.Len() < maxTextBytes {
			b.WriteString(n.Delta)
		}
	case "thread/tokenUsage/updated":
		var n struct {
			TokenUsage struct {
				Total codexTokens `json:"total"`
			} `json:"tokenUsage"`
		}
		if json.Unmarshal(params, &n) == nil {
			p.total = n.TokenUsage.Total
		}
	case "turn/completed":
		p.turnCompleted(params, emit)
	case "error":
		var n struct {
			Error struct {
				Message           string `json:"message"`
				AdditionalDetails string `json:"additionalDetails"`
			} `json:"error"`
			WillRetry bool `json:"willRetry"`
		}
		_ = json.Unmarshal(params, &n)
		text := strings.TrimSpace(n.Error.Message + "\n" + n.Error.AdditionalDetails)
		if n.WillRetry {
			text += " (retrying)"
		}
		emit(Event{Kind: KindError, Text: capText(text)})
	case "serverRequest/resolved":
		// Also sent after Fetch's own reply; for a request that is no
		// longer open the cancellation is nothing.
		var n struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &n) == nil && rpcID(n.RequestID) != "" {
			emit(Event{Kind: KindRequestCancelled, Request: &Request{ID: rpcID(n.RequestID)}})
		}
	default:
		if !codexAppIgnored[method] {
			emit(rawEvent(line))
		}
	}
}

// turnCompleted ends a turn: its usage, then the result.
func (p *codexAppParser) turnCompleted(params json.RawMessage, emit func(Event)) {
	var n struct {
		Turn struct {
			Status string `json:"status"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(params, &n)
	p.usage(emit)
	last := p.last
	p.last = ""
	switch n.Turn.Status {
	case "completed":
		emit(Event{Kind: KindResult, Success: true, Text: last})
	case "interrupted":
		emit(Event{Kind: KindResult, Text: "interrupted: the turn was interrupted"})
	default:
		msg := "turn failed"
		if n.Turn.Error != nil && strings.TrimSpace(n.Turn.Error.Message) != "" {
			msg = n.Turn.Error.Message
		}
		emit(Event{Kind: KindResult, Text: capText(msg)})
	}
}

func (p *codexAppParser) itemStarted(it codexAppThreadItem, emit func(Event)) {
	switch it.Type {
	case "commandExecution":
		p.items[it.ID] = codexAppItem{command: it.Command}
		emit(Event{Kind: KindCommand, Tool: "command_execution", ToolID: it.ID, Command: it.Command})
	case "fileChange":
		p.items[it.ID] = codexAppItem{changes: it.Changes}
		input, _ := json.Marshal(map[string]any{"changes": codexChangeList(it.Changes)})
		emit(Event{Kind: KindToolUse, Tool: "apply_patch", ToolID: it.ID, Input: capInput(input)})
	case "mcpToolCall":
		emit(Event{Kind: KindToolUse, Tool: it.Server + "/" + it.Tool, ToolID: it.ID, Input: capInput(it.Arguments)})
	case "webSearch":
		input, _ := json.Marshal(map[string]string{"query": it.Query})
		emit(Event{Kind: KindToolUse, Tool: "web_search", ToolID: it.ID, Input: input})
	}
}

// codexChangeList is what a tool_use event shows of a patch: the paths and
// kinds, as the one-shot parser shows them.
func codexChangeList(changes []codexFileChange) []codexChange {
	out := make([]codexChange, 0, len(changes))
	for _, c := range changes {
		out = append(out, codexChange{Path: c.Path, Kind: c.Kind.Type})
	}
	return out
}

func (p *codexAppParser) itemCompleted(it codexAppThreadItem, line []byte, emit func(Event)) {
	delete(p.items, it.ID)
	switch it.Type {
	case "agentMessage":
		text := it.Text
		if b := p.deltas[it.ID]; strings.TrimSpace(text) == "" && b != nil {
			text = b.String()
		}
		delete(p.deltas, it.ID)
		if strings.TrimSpace(text) != "" {
			p.last = capText(text)
			emit(Event{Kind: KindText, Text: p.last})
		}
	case "commandExecution":
		switch it.Status {
		case "declined":
			emit(Event{Kind: KindError, Tool: "command_execution", ToolID: it.ID, Text: "command declined: " + it.Command})
		default:
			ev := Event{Kind: KindCommand, Tool: "command_execution", ToolID: it.ID, Command: it.Command, ExitCode: it.ExitCode}
			if it.AggregatedOutput != nil {
				ev.Text = capText(*it.AggregatedOutput)
			}
			if ev.ExitCode == nil && it.Status == "failed" {
				ev.ExitCode = exitCode(-1)
			}
			emit(ev)
		}
	case "fileChange":
		switch it.Status {
		case "completed":
			for _, c := range it.Changes {
				emit(Event{Kind: KindFileChanged, Tool: "apply_patch", ToolID: it.ID, Path: c.Path, Change: codexChangeKind(c.Kind.Type)})
			}
		case "declined":
			emit(Event{Kind: KindError, Tool: "apply_patch", ToolID: it.ID, Text: "patch declined"})
		case "failed":
			emit(Event{Kind: KindError, Tool: "apply_patch", ToolID: it.ID, Text: "patch failed"})
		}
	case "mcpToolCall":
		if it.Status == "failed" {
			emit(Event{Kind: KindError, Tool: it.Server + "/" + it.Tool, ToolID: it.ID, Text: capText(errorMessage(it.Error))})
		}
	case "userMessage", "reasoning", "plan", "webSearch", "hookPrompt", "contextCompaction", "imageView", "enteredReviewMode", "exitedReviewMode":
	default:
		emit(rawEvent(line))
	}
}

// request reads one of the app-server's requests to Fetch.
func (p *codexAppParser) request(id, method string, params json.RawMessage, line []byte, emit func(Event)) {
	r := Request{ID: id, Control: method, NoReason: true}
	switch {
	case id == "":
		r.ID = ""
		emit(badRequest(r, "a request with an id that is neither a number nor a string: "+capString(string(line), 512)))
		return
	case len(params) > maxRequestInputBytes:
		emit(badRequest(r, fmt.Sprintf("a %s request of %d bytes, too large to relay", capString(method, 100), len(params))))
		return
	}
	switch method {
	case codexMethodCommandApproval:
		emit(p.commandApproval(r, params))
	case codexMethodFileApproval:
		emit(p.fileApproval(r, params))
	case codexMethodUserInput:
		emit(codexQuestions(r, params))
	default:
		emit(badRequest(r, fmt.Sprintf("the CLI asked for %q, which Fetch does not serve", capString(method, 100))))
	}
}

// commandApproval reads item/commandExecution/requestApproval.
func (p *codexAppParser) commandApproval(r Request, params json.RawMessage) Event {
	var a struct {
		ThreadID               string `json:"threadId"`
		ItemID                 string `json:"itemId"`
		Reason                 string `json:"reason"`
		Command                string `json:"command"`
		Cwd                    string `json:"cwd"`
		NetworkApprovalContext *struct {
			Host string `json:"host"`
		} `json:"networkApprovalContext"`
	}
	if err := json.Unmarshal(params, &a); err != nil {
		return badRequest(r, "a command approval whose params are not readable: "+codexJSONProblem(err))
	}
	r.Session, r.ToolUseID, r.Reason = a.ThreadID, a.ItemID, capString(a.Reason, 1024)
	command := a.Command
	if command == "" {
		command = p.items[a.ItemID].command
	}
	switch {
	case command != "":
		r.Tool, r.Action, r.Command = "shell", ActionShell, codexUnwrapShell(command)
	case a.NetworkApprovalContext != nil && a.NetworkApprovalContext.Host != "":
		r.Tool, r.Action, r.URL = "network", ActionFetch, a.NetworkApprovalContext.Host
	default:
		return badRequest(r, "a command approval without a command")
	}
	r.Input = json.RawMessage(bytes.Clone(params))
	// The fingerprint leaves out the ids, which differ between two asks
	// of the same thing.
	same, _ := json.Marshal(struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd"`
		Host    string `json:"host,omitempty"`
	}{command, a.Cwd, r.URL})
	r.Fingerprint = fingerprint(r.Tool, same)
	return Event{Kind: KindPermission, Tool: r.Tool, ToolID: r.ToolUseID, Command: r.Command, Request: &r}
}

// fileApproval reads item/fileChange/requestApproval. The request names
// only the item: what it would change is the fileChange item of the
// item/started before it.
func (p *codexAppParser) fileApproval(r Request, params json.RawMessage) Event {
	var a struct {
		ThreadID  string `json:"threadId"`
		ItemID    string `json:"itemId"`
		Reason    string `json:"reason"`
		GrantRoot string `json:"grantRoot"`
	}
	if err := json.Unmarshal(params, &a); err != nil {
		return badRequest(r, "a file change approval whose params are not readable: "+codexJSONProblem(err))
	}
	r.Session, r.ToolUseID, r.Tool = a.ThreadID, a.ItemID, "edit"
	r.Reason = capString(a.Reason, 1024)
	if a.GrantRoot != "" {
		// Allowing would also let Codex write under the root for the rest
		// of its session: not what a one-time allow means.
		return badRequest(r, "a request for write access to everything under "+capString(a.GrantRoot, 512))
	}
	it, ok := p.items[a.ItemID]
	if !ok || len(it.changes) == 0 {
		return badRequest(r, "a file change approval for a change Fetch was not shown")
	}
	r.Action = ActionDelete
	for _, c := range it.changes {
		if c.Kind.Type != "delete" {
			r.Action = ActionEdit
		}
	}
	r.Path = it.changes[0].Path
	r.Diff = codexDiff(it.changes)
	r.Input = json.RawMessage(bytes.Clone(params))
	same, _ := json.Marshal(it.changes)
	r.Fingerprint = fingerprint(r.Tool, same)
	return Event{Kind: KindPermission, Tool: r.Tool, ToolID: r.ToolUseID, Path: r.Path, Request: &r}
}

// codexDiff is a compact diff of a patch's changes: an added file's
// content, a deleted file's content, an update's changed lines (its
// unified diff without headers and context). A patch of several files
// names each.
func codexDiff(changes []codexFileChange) string {
	var d diffBuilder
	for _, c := range changes {
		if len(changes) > 1 {
			d.add("", "@@ "+path.Base(c.Path))
		}
		switch c.Kind.Type {
		case "add":
			d.edit("", c.Diff)
		case "delete":
			d.edit(c.Diff, "")
		default:
			for _, l := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
				switch {
				case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
				case strings.HasPrefix(l, "+"):
					d.add("+", l[1:])
				case strings.HasPrefix(l, "-"):
					d.add("-", l[1:])
				}
			}
			if c.Kind.MovePath != "" {
				d.add("", "moved to "+c.Kind.MovePath)
			}
		}
	}
	return d.String()
}

// codexQuestions reads item/tool/requestUserInput.
func codexQuestions(r Request, params json.RawMessage) Event {
	r.Tool = "request_user_input"
	var p codexUserInputParams
	if err := json.Unmarshal(params, &p); err != nil {
		return badRequest(r, "a question whose params are not readable: "+codexJSONProblem(err))
	}
	r.Session, r.ToolUseID, r.Action = p.ThreadID, p.ItemID, ActionInternal
	if len(p.Questions) == 0 {
		return badRequest(r, "a request for input without questions")
	}
	seen := make(map[string]bool)
	var text []string
	for _, q := range p.Questions {
		switch {
		case q.ID == "" || seen[q.ID]:
			// The answers are keyed by the question's id.
			return badRequest(r, "a question without an id of its own")
		case strings.TrimSpace(q.Question) == "":
			return badRequest(r, "a question without text")
		case len(q.Question) > 4096:
			return badRequest(r, "a question longer than 4096 bytes")
		}
		seen[q.ID] = true
		oq := Question{Question: q.Question, Header: capString(q.Header, 256)}
		for _, o := range q.Options {
			oq.Options = append(oq.Options, Option{Label: capString(o.Label, 512), Description: capString(o.Description, 1024)})
		}
		r.Questions = append(r.Questions, oq)
		text = append(text, q.Question)
	}
	r.Input = json.RawMessage(bytes.Clone(params))
	same, _ := json.Marshal(r.Questions)
	r.Fingerprint = fingerprint(r.Tool, same)
	return Event{Kind: KindAsk, Tool: r.Tool, ToolID: r.ToolUseID, Text: capText(strings.Join(text, "\n")), Request: &r}
}

// codexJSONProblem says what was wrong with params, without Go's names
// for the types it expected.
func codexJSONProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "they are " + te.Value + ", not an object"
		}
		return capString(te.Field, 100) + " is " + te.Value
	}
	return capString(err.Error(), 200)
}

// codexUnwrapShell returns the script of a command Codex runs through a
// shell (`/bin/bash -lc 'npm test'`: shlex_join of its argv), so that the
// owner and the policy see the command itself; any other command line is
// returned as it is.
func codexUnwrapShell(command string) string {
	shell, rest, ok := strings.Cut(command, " ")
	if !ok {
		return command
	}
	switch path.Base(shell) {
	case "bash", "sh", "zsh":
	default:
		return command
	}
	flag, script, ok := strings.Cut(rest, " ")
	if !ok || (flag != "-lc" && flag != "-c") {
		return command
	}
	words, ok := shellWords(script)
	if !ok || len(words) != 1 {
		return command
	}
	return words[0]
}

// shellWords splits s into words as a POSIX shell would for quoting
// (single quotes, double quotes with \ escapes, backslashes), or reports
// that s is not only words (an unclosed quote, an operator or expansion
// outside quotes).
func shellWords(s string) ([]string, bool) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		case strings.IndexByte(";&|<>()$`*?[]{}~#!", c) >= 0:
			return nil, false // shell syntax outside quotes: more than words
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}
