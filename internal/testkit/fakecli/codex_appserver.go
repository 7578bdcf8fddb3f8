package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Codex's two-way mode, as the fake plays it:
//
//	codex app-server [--listen stdio://]
//
// JSON-RPC 2.0 without the "jsonrpc" field, one message a line, in the
// shapes of codex-rs/app-server-protocol at rust-v0.125.0
// (harness/testdata/codex-appserver/README.md says where each comes from;
// fields Fetch does not read are abbreviated). It answers initialize (any
// other request before it gets "Not initialized"), thread/start and
// thread/resume (working in the thread's cwd), and plays the prompt of each
// turn/start: the response, turn/started, then the turn's items, and
// turn/completed. Server requests count their ids from 0, as the
// app-server's do.
//
// Under approvalPolicy "untrusted" it asks before each command
// (item/commandExecution/requestApproval, after the commandExecution
// item's item/started) and each patch (item/fileChange/requestApproval,
// after the fileChange item's item/started, which carries the diff); under
// any other policy it runs them without asking, as Codex does with
// danger-full-access. "accept" runs the command (echoes it) or writes the
// file; "decline" ends the item "declined" and the turn goes on; "cancel"
// also interrupts the turn. turn/interrupt answers {} and ends the turn
// with status "interrupted", whether or not a request waits.
//
// The goal's directives are those of twoway.go: [ask-permission:TOOL:CMD]
// (TOOL is ignored), [ask-permission-repeat:…], [ask-edit:PATH],
// [ask-question:QUESTION:A|B] (item/tool/requestUserInput, offered only when
// thread/start's config sets features.default_mode_request_user_input, as
// in Default mode; the answer is appended to the scenario's file with the
// process id) and [ask-unknown] (an mcpServer/elicitation/request, which
// Fetch does not serve). [plan] is reported as not done. Without a
// directive it asks to edit the scenario's file. After the turn it keeps
// reading until stdin closes, and exits then.

// appIn is one line of stdin.
type appIn struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// appServer is one run of the fake codex app-server.
type appServer struct {
	o           out
	in          <-chan appIn
	stderr      io.Writer
	initialized bool
	nextID      int // of the fake's own requests, from 0
	seq         int // of item ids
	thread      *session
	policy      string
	questions   bool // request_user_input is offered in Default mode
	turn        string
	sc          scenario
	notes       []string
	// steered are the texts of turn/steer messages the running turn
	// took while it waited for something else (an approval).
	steered []string
}

// errTurnInterrupted: turn/interrupt arrived during the turn.
var errTurnInterrupted = errors.New("interrupted")

// playAppServer runs `codex app-server` and returns the exit code.
func playAppServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var listen string
	f := newFlags("codex app-server", stderr)
	f.str(&listen, "listen")
	pos, err := f.parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "codex: %v\n", err)
		return 2
	}
	if len(pos) > 0 || (listen != "" && listen != "stdio://") {
		fmt.Fprintf(stderr, "codex: fakecli scripts only app-server on stdio, not %q %q\n", listen, pos)
		return 2
	}
	a := &appServer{o: out{w: stdout}, in: readAppServer(stdin, stderr), stderr: stderr}
	for m := range a.in {
		a.serve(m)
	}
	return 0
}

// readAppServer sends each stdin line as a message until stdin ends; a
// line that is not such a message is reported on stderr and skipped.
func readAppServer(in io.Reader, stderr io.Writer) <-chan appIn {
	ch := make(chan appIn)
	go func() { // ends at the end of stdin; the process ends with it or before
		defer close(ch)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var m appIn
			var head map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &head); err != nil || head["jsonrpc"] != nil {
				// codex-rs/app-server-protocol: messages have no "jsonrpc".
				fmt.Fprintf(stderr, "ERROR codex_app_server: failed to deserialize JSONRPCMessage: %.200q\n", sc.Bytes())
				continue
			}
			_ = json.Unmarshal(sc.Bytes(), &m)
			ch <- m
		}
	}()
	return ch
}

func (a *appServer) respond(id json.RawMessage, result any) {
	a.o.json(obj{"id": id, "result": result})
}

func (a *appServer) fail(id json.RawMessage, code int, msg string) {
	a.o.json(obj{"id": id, "error": obj{"code": code, "message": msg}})
}

func (a *appServer) notify(method string, params obj) {
	a.o.json(obj{"method": method, "params": params})
}

// serve handles a message outside a turn.
func (a *appServer) serve(m appIn) {
	switch {
	case m.Method == "initialize":
		if a.initialized {
			a.fail(m.ID, -32600, "Already initialized")
			return
		}
		a.initialized = true
		home, _ := os.UserHomeDir()
		a.respond(m.ID, obj{"userAgent": "fetch/0.169.0 (fakecli)", "codexHome": filepath.Join(home, ".codex"), "platformFamily": "unix", "platformOs": "linux"})
	case m.Method == "initialized" && len(m.ID) == 0:
	case m.Method != "" && len(m.ID) > 0 && !a.initialized:
		a.fail(m.ID, -32600, "Not initialized")
	case m.Method == "thread/start" || m.Method == "thread/resume":
		a.startThread(m)
	case m.Method == "turn/start":
		a.playTurn(m)
	case m.Method == "turn/interrupt" || m.Method == "turn/steer":
		a.fail(m.ID, -32600, "no active turn to "+strings.TrimPrefix(m.Method, "turn/"))
	case m.Method != "" && len(m.ID) > 0:
		a.fail(m.ID, -32601, "Method not found: "+m.Method)
	default:
		fmt.Fprintf(a.stderr, "fakecli: app-server: ignoring %s\n", orDefault(m.Method, "a response"))
	}
}

func (a *appServer) startThread(m appIn) {
	var p struct {
		ThreadID       string         `json:"threadId"`
		Cwd            string         `json:"cwd"`
		Model          string         `json:"model"`
		ApprovalPolicy string         `json:"approvalPolicy"`
		Sandbox        string         `json:"sandbox"`
		Config         map[string]any `json:"config"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		a.fail(m.ID, -32602, "Invalid request: "+err.Error())
		return
	}
	switch p.ApprovalPolicy {
	case "", "untrusted", "on-failure", "on-request", "never":
	default:
		a.fail(m.ID, -32602, "Invalid request: unknown variant `"+p.ApprovalPolicy+"`")
		return
	}
	switch p.Sandbox {
	case "", "read-only", "workspace-write", "danger-full-access":
	default:
		a.fail(m.ID, -32602, "Invalid request: unknown variant `"+p.Sandbox+"`")
		return
	}
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			a.fail(m.ID, -32602, "Invalid request: cwd must be absolute")
			return
		}
		if err := os.Chdir(p.Cwd); err != nil {
			a.fail(m.ID, -32603, "cwd: "+err.Error())
			return
		}
	}
	inv := invocation{cli: "codex", resume: p.ThreadID}
	if m.Method == "thread/resume" {
		s, err := loadSession(inv)
		if err != nil {
			a.fail(m.ID, -32600, "no rollout found for thread id "+p.ThreadID)
			return
		}
		a.thread = s
	} else {
		a.thread = &session{ID: newID("codex"), CLI: "codex"}
		a.thread.path = sessionPath(inv, a.thread.ID)
	}
	a.policy = orDefault(p.ApprovalPolicy, "on-request")
	a.questions = p.Config["features.default_mode_request_user_input"] == true
	now := time.Now().Unix()
	thread := obj{"id": a.thread.ID, "forkedFromId": nil, "preview": a.thread.Goal, "ephemeral": false, "modelProvider": "openai",
		"createdAt": now, "updatedAt": now, "status": obj{"type": "idle"}, "path": nil, "cwd": cwd(), "cliVersion": "0.169.0",
		"source": "appServer", "agentNickname": nil, "agentRole": nil, "gitInfo": nil, "name": nil, "turns": []obj{}}
	sandbox := obj{"type": "dangerFullAccess"}
	if p.Sandbox != "danger-full-access" {
		sandbox = obj{"type": "workspaceWrite", "writableRoots": []string{}, "networkAccess": false}
	}
	a.respond(m.ID, obj{"thread": thread, "model": orDefault(p.Model, "gpt-5.5-codex"), "modelProvider": "openai", "serviceTier": nil,
		"cwd": cwd(), "instructionSources": []string{}, "approvalPolicy": a.policy, "approvalsReviewer": "user", "sandbox": sandbox,
		"reasoningEffort": nil})
	if m.Method == "thread/start" {
		a.notify("thread/started", obj{"thread": thread})
	}
}

func (a *appServer) item(prefix string) string {
	a.seq++
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), a.seq)
}

func (a *appServer) note(s string) { a.notes = append(a.notes, s) }

// say writes an agent message: item/started, one delta, item/completed.
func (a *appServer) say(text string) {
	id := a.item("msg")
	a.notify("item/started", obj{"item": obj{"type": "agentMessage", "id": id, "text": "", "phase": nil}, "threadId": a.thread.ID, "turnId": a.turn})
	a.notify("item/agentMessage/delta", obj{"threadId": a.thread.ID, "turnId": a.turn, "itemId": id, "delta": text})
	a.notify("item/completed", obj{"item": obj{"type": "agentMessage", "id": id, "text": text, "phase": nil}, "threadId": a.thread.ID, "turnId": a.turn})
}

// playTurn plays one turn/start.
func (a *appServer) playTurn(m appIn) {
	var p struct {
		ThreadID string `json:"threadId"`
		Input    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			Path string `json:"path"`
		} `json:"input"`
	}
	if json.Unmarshal(m.Params, &p) != nil || a.thread == nil || p.ThreadID != a.thread.ID {
		a.fail(m.ID, -32600, "thread not found: "+p.ThreadID)
		return
	}
	var text []string
	for _, in := range p.Input {
		switch in.Type {
		case "text":
			text = append(text, in.Text)
		case "localImage":
			// Codex reads the picture from the path it is given.
			data, err := os.ReadFile(in.Path)
			if err != nil {
				a.fail(m.ID, -32600, "cannot read image "+in.Path+": "+err.Error())
				return
			}
			appendImage(fmt.Sprintf("image: %s %d bytes", in.Path, len(data)), a.stderr)
		}
	}
	goal := strings.Join(text, "\n")
	a.thread.Turns++
	if a.thread.Goal == "" {
		a.thread.Goal = goal
	}
	if err := a.thread.save(); err != nil {
		fmt.Fprintf(a.stderr, "fakecli: save session: %v\n", err)
	}
	a.turn = a.item("turn")
	a.notes, a.sc = nil, parseScenario(goal)
	if a.thread.Turns > 1 && a.sc.file == defaultFile {
		a.sc.file = parseScenario(a.thread.Goal).file
	}
	turn := obj{"id": a.turn, "items": []obj{}, "status": "inProgress", "error": nil, "startedAt": time.Now().Unix(), "completedAt": nil, "durationMs": nil}
	a.respond(m.ID, obj{"turn": turn})
	a.notify("turn/started", obj{"threadId": a.thread.ID, "turn": turn})
	a.notify("item/started", obj{"item": obj{"type": "userMessage", "id": a.item("user"), "content": []obj{{"type": "text", "text": goal, "text_elements": []obj{}}}},
		"threadId": a.thread.ID, "turnId": a.turn})
	ds := twoWayDirective.FindAllStringSubmatch(goal, -1)
	if len(ds) == 0 {
		ds = [][]string{{"", "ask-edit", a.sc.file}}
	}
	if a.sc.name == "await-message" {
		ds = append(ds, []string{"", "await-steer", a.sc.file})
	}
	a.say("Let me work on that.")
	status := "completed"
	for _, d := range ds {
		var err error
		switch name, arg := d[1], d[2]; name {
		case "ask-permission":
			_, cmd, _ := strings.Cut(arg, ":")
			err = a.command(cmd)
		case "ask-permission-repeat":
			err = repeat(arg, func(_, cmd string) error { return a.command(cmd) })
		case "ask-edit":
			err = a.edit(arg)
		case "ask-question":
			err = a.question(arg)
		case "ask-unknown":
			err = a.unknown()
		case "await-steer":
			err = a.awaitSteer(arg)
		default:
			a.note(fmt.Sprintf("Could not %s: Codex plans only in its experimental plan mode.", name))
		}
		if errors.Is(err, errTurnInterrupted) {
			status = "interrupted"
			break
		}
		if err != nil {
			fmt.Fprintf(a.stderr, "ERROR codex_app_server: %v\n", err)
			return // stdin ended: the process exits
		}
	}
	if status == "completed" {
		a.say(strings.TrimSpace("Done. " + strings.Join(a.notes, " ")))
	}
	usage := obj{"totalTokens": fakeInputTokens*a.thread.Turns + fakeOutputTokens*a.thread.Turns, "inputTokens": fakeInputTokens * a.thread.Turns,
		"cachedInputTokens": 0, "outputTokens": fakeOutputTokens * a.thread.Turns, "reasoningOutputTokens": 0}
	last := obj{"totalTokens": fakeInputTokens + fakeOutputTokens, "inputTokens": fakeInputTokens, "cachedInputTokens": 0, "outputTokens": fakeOutputTokens, "reasoningOutputTokens": 0}
	a.notify("thread/tokenUsage/updated", obj{"threadId": a.thread.ID, "turnId": a.turn, "tokenUsage": obj{"total": usage, "last": last, "modelContextWindow": 272000}})
	turn["status"], turn["completedAt"] = status, time.Now().Unix()
	a.notify("turn/completed", obj{"threadId": a.thread.ID, "turn": turn})
	a.turn = ""
}

// ask sends a server request and waits for its response, serving what
// else arrives; turn/interrupt ends the wait with errTurnInterrupted.
func (a *appServer) ask(method string, params obj) (appIn, error) {
	id := a.nextID
	a.nextID++
	a.o.json(obj{"method": method, "id": id, "params": params})
	for m := range a.in {
		switch {
		case m.Method == "" && string(m.ID) == strconv.Itoa(id):
			a.notify("serverRequest/resolved", obj{"threadId": a.thread.ID, "requestId": id})
			return m, nil
		case m.Method == "turn/interrupt":
			a.interrupt(m)
			// The pending request is cleared with the turn.
			a.notify("serverRequest/resolved", obj{"threadId": a.thread.ID, "requestId": id})
			return appIn{}, errTurnInterrupted
		case m.Method == "turn/start":
			a.fail(m.ID, -32600, "a turn is already running")
		case m.Method == "turn/steer":
			// Codex takes a steer into the running turn whatever it
			// waits for.
			if text, ok := a.steer(m); ok {
				a.steered = append(a.steered, text)
			}
		case m.Method != "" && len(m.ID) > 0:
			a.serve(m)
		default:
			fmt.Fprintf(a.stderr, "fakecli: app-server: ignoring %s while waiting for the reply to %d\n", orDefault(m.Method, "a response"), id)
		}
	}
	return appIn{}, errStdinClosed
}

// awaitSteer plays [scenario:await-message]: the turn waits for a
// turn/steer (serving what else comes), answers it with the running
// turn's id as Codex does, and appends "message: TEXT" (its first line)
// to name.
func (a *appServer) awaitSteer(name string) error {
	if len(a.steered) > 0 {
		text := a.steered[0]
		a.steered = a.steered[1:]
		return a.editLine(name, "message: "+firstLine(text)+"\n")
	}
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case m, ok := <-a.in:
			if !ok {
				return errStdinClosed
			}
			switch {
			case m.Method == "turn/steer":
				text, ok := a.steer(m)
				if !ok {
					continue
				}
				return a.editLine(name, "message: "+firstLine(text)+"\n")
			case m.Method == "turn/interrupt":
				a.interrupt(m)
				return errTurnInterrupted
			case m.Method != "" && len(m.ID) > 0:
				a.serve(m)
			}
		case <-timeout:
			a.note("No message came.")
			return nil
		}
	}
}

// steer answers a turn/steer into the running turn, as Codex does (the
// running turn's id), and returns its text; a steer that names another
// turn is refused.
func (a *appServer) steer(m appIn) (string, bool) {
	var p struct {
		Input []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"input"`
		ExpectedTurnID string `json:"expectedTurnId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.ExpectedTurnID != a.turn || a.turn == "" {
		a.fail(m.ID, -32600, "expected turn mismatch")
		return "", false
	}
	a.respond(m.ID, obj{"turnId": a.turn})
	var text []string
	for _, in := range p.Input {
		if in.Type == "text" {
			text = append(text, in.Text)
		}
	}
	return strings.Join(text, "\n"), true
}

// interrupt answers turn/interrupt for the running turn.
func (a *appServer) interrupt(m appIn) {
	var p struct {
		ThreadID string `json:"threadId"`
		TurnID   string `json:"turnId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.ThreadID != a.thread.ID || p.TurnID != a.turn {
		fmt.Fprintf(a.stderr, "fakecli: app-server: turn/interrupt for %s/%s, not the running %s/%s; interrupting anyway\n", p.ThreadID, p.TurnID, a.thread.ID, a.turn)
	}
	a.respond(m.ID, obj{})
}

// decision asks an approval and returns its decision ("accept" when the
// policy does not ask).
func (a *appServer) decision(method string, params obj) (string, error) {
	if a.policy != "untrusted" {
		return "accept", nil
	}
	m, err := a.ask(method, params)
	if err != nil {
		return "", err
	}
	if m.Error != nil {
		return "decline", nil
	}
	var r struct {
		Decision json.RawMessage `json:"decision"`
	}
	_ = json.Unmarshal(m.Result, &r)
	var d string
	if json.Unmarshal(r.Decision, &d) != nil {
		return "", fmt.Errorf("a decision the fake does not script: %s", r.Decision)
	}
	switch d {
	case "accept", "acceptForSession", "decline", "cancel":
		return d, nil
	}
	return "", fmt.Errorf("unknown decision %q", d)
}

func (a *appServer) command(cmd string) error {
	id := a.item("call")
	item := obj{"type": "commandExecution", "id": id, "command": bashLC(cmd), "cwd": cwd(), "processId": nil, "source": "agent",
		"status": "inProgress", "commandActions": []obj{{"type": "unknown", "command": cmd}}, "aggregatedOutput": nil, "exitCode": nil, "durationMs": nil}
	a.notify("item/started", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
	d, err := a.decision("item/commandExecution/requestApproval", obj{"threadId": a.thread.ID, "turnId": a.turn, "itemId": id,
		"reason": "Run " + cmd + "?", "command": bashLC(cmd), "cwd": cwd(), "commandActions": item["commandActions"]})
	if err != nil {
		item["status"] = "declined"
		a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
		return err
	}
	switch d {
	case "decline", "cancel":
		item["status"] = "declined"
		a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
		if d == "cancel" {
			return errTurnInterrupted
		}
		a.note(fmt.Sprintf("Did not run `%s`: the user declined.", cmd))
		return nil
	}
	item["status"], item["aggregatedOutput"], item["exitCode"], item["durationMs"] = "completed", "fakecli ran: "+cmd+"\n", 0, 3
	a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
	a.note(fmt.Sprintf("Ran `%s`.", cmd))
	return nil
}

func (a *appServer) edit(name string) error {
	return a.editLine(name, fmt.Sprintf("fake codex edited this with the owner's permission (turn %d)\n", a.thread.Turns))
}

// editLine appends line to name, asking for it as edit does.
func (a *appServer) editLine(name, line string) error {
	path, before, created, ok := editTarget(name, a.note)
	if !ok {
		return nil
	}
	after := string(before) + line
	// FileUpdateChange: an added file's diff is its content, an update's
	// a unified diff (item_builders.rs format_file_change_diff).
	change := obj{"path": path, "kind": obj{"type": "add"}, "diff": after}
	if !created {
		n := strings.Count(string(before), "\n")
		change = obj{"path": path, "kind": obj{"type": "update", "move_path": nil},
			"diff": fmt.Sprintf("@@ -%d,0 +%d,1 @@\n+%s", n, n+1, line)}
	}
	id := a.item("call")
	item := obj{"type": "fileChange", "id": id, "changes": []obj{change}, "status": "inProgress"}
	a.notify("item/started", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
	d, err := a.decision("item/fileChange/requestApproval", obj{"threadId": a.thread.ID, "turnId": a.turn, "itemId": id})
	if err != nil {
		item["status"] = "declined"
		a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
		return err
	}
	switch d {
	case "decline", "cancel":
		item["status"] = "declined"
		a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
		if d == "cancel" {
			return errTurnInterrupted
		}
		a.note(fmt.Sprintf("Did not edit %s: the user declined.", name))
		return nil
	}
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		item["status"] = "failed"
		a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
		a.note("Could not write " + name + ": " + err.Error())
		return nil
	}
	item["status"] = "completed"
	a.notify("item/completed", obj{"item": item, "threadId": a.thread.ID, "turnId": a.turn})
	a.note("Edited " + name + ".")
	return nil
}

func (a *appServer) question(arg string) error {
	if !a.questions {
		// What Codex tells the model in Default mode without the feature
		// (codex-question-request-user-input.md).
		a.note("request_user_input is unavailable in Default mode.")
		return nil
	}
	q, opts, _ := strings.Cut(arg, ":")
	var options []obj
	for _, o := range strings.Split(opts, "|") {
		if o = strings.TrimSpace(o); o != "" {
			options = append(options, obj{"label": o, "description": "Choose " + o})
		}
	}
	qid := "q_" + strconv.Itoa(a.seq)
	m, err := a.ask("item/tool/requestUserInput", obj{"threadId": a.thread.ID, "turnId": a.turn, "itemId": a.item("call"),
		"questions": []obj{{"id": qid, "header": "Question", "question": q, "isOther": true, "isSecret": false, "options": orEmpty(options)}}})
	if err != nil {
		return err
	}
	var r struct {
		Answers map[string]struct {
			Answers []string `json:"answers"`
		} `json:"answers"`
	}
	_ = json.Unmarshal(m.Result, &r)
	got := r.Answers[qid].Answers
	if m.Error != nil || len(got) == 0 {
		a.note("Got no answer to " + strconv.Quote(q) + ".")
		return nil
	}
	line := fmt.Sprintf("answer: %s (fakecli pid %d)\n", got[0], os.Getpid())
	if err := appendFile(a.sc.file, line); err != nil {
		a.note("Could not record the answer: " + err.Error())
		return nil
	}
	a.note(fmt.Sprintf("Recorded your answer %q in %s.", got[0], a.sc.file))
	return nil
}

// unknown sends an MCP elicitation, which Fetch does not serve.
func (a *appServer) unknown() error {
	m, err := a.ask("mcpServer/elicitation/request", obj{"threadId": a.thread.ID, "turnId": a.turn, "serverName": "docs",
		"mode": "form", "message": "Which docs?", "requestedSchema": obj{"type": "object", "properties": obj{}}})
	if err != nil {
		return err
	}
	if m.Error != nil {
		a.note(fmt.Sprintf("The mcpServer/elicitation/request got error %d (%s).", m.Error.Code, m.Error.Message))
		return nil
	}
	a.note("The mcpServer/elicitation/request was answered.")
	return nil
}
