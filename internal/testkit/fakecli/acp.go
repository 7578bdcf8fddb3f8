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

// Gemini CLI's and Qwen Code's two-way mode, the Agent Client Protocol, as
// the fake plays it (and, in acp_agents.go, Copilot CLI's, OpenCode's and
// a generic agent's):
//
//	gemini --acp [--model M]
//	qwen --acp [--auth-type openai] [--model M]
//
// JSON-RPC 2.0, one message a line (the ACP SDK's ndJsonStream writes
// JSON.stringify(message) + "\n"): it answers initialize and session/new
// (or session/load), and plays the prompt of session/prompt. Before it runs
// a command or writes a file it asks with session/request_permission, in
// each CLI's shape (harness/testdata/acp/README.md says where each shape
// comes from): Gemini CLI sends no rawInput and puts a shell command alone
// in the title; Qwen Code sends rawInput and its own options. An allow
// runs it (echoes the command, really edits the file); a rejection (its
// reject option, or the "cancelled" outcome) is reported to the model as
// a tool error, and the turn goes on. session/cancel ends the turn with
// stopReason "cancelled". The turn ends with stopReason "end_turn"; the
// fake keeps reading until stdin closes, like the SDK's connection, and
// exits then.
//
// The goal's directives are those of twoway.go: [ask-permission:TOOL:CMD]
// (TOOL is ignored: ACP names the kind, execute), [ask-permission-repeat:…],
// [ask-edit:PATH] and [ask-unknown] (an fs/read_text_file request, which a
// client without the fs capability must refuse). Questions and plans have
// no ACP form: [ask-question] and [plan] are reported as not done. Without
// a directive it asks to edit the scenario's file.

// acpIn is one line of stdin.
type acpIn struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// acpRun is one ACP run of the fake gemini or qwen.
type acpRun struct {
	inv     invocation
	o       out
	in      <-chan acpIn
	stderr  io.Writer
	qwen    bool
	nextID  int // of the fake's own requests, from 0 like the SDK's
	session string
	sc      scenario
	notes   []string
	turns   int // of the session, this prompt's included
	// played counts the prompts this process played; message is the
	// first line of a later prompt without directives (a message of the
	// user's, sent when the running turn ended), which its edit records.
	played  int
	message string
}

// playACP runs the ACP mode and returns the exit code.
func playACP(inv invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	r := &acpRun{inv: inv, o: out{w: stdout}, in: readACP(stdin, stderr), stderr: stderr, qwen: inv.cli == "qwen"}
	for m := range r.in {
		switch {
		case m.Method == "initialize":
			r.respond(m.ID, r.initializeResult())
		case m.Method == "session/new" || m.Method == "session/load":
			var p struct {
				SessionID string `json:"sessionId"`
				Cwd       string `json:"cwd"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if !filepath.IsAbs(p.Cwd) {
				r.fail(m.ID, -32602, "Invalid params", "cwd must be an absolute path")
				continue
			}
			if m.Method == "session/load" {
				s, err := loadSession(invocation{cli: inv.cli, resume: p.SessionID})
				if err != nil {
					r.fail(m.ID, -32002, "Resource not found", p.SessionID)
					continue
				}
				r.session = s.ID
				r.respond(m.ID, nil)
				continue
			}
			r.session = newID(inv.cli) // a UUID, like Gemini CLI's randomUUID()
			r.respond(m.ID, obj{"sessionId": r.session, "modes": obj{"availableModes": []obj{
				{"id": "default", "name": "Default", "description": "Prompts for approval"},
				{"id": "autoEdit", "name": "Auto Edit", "description": "Auto-approves edit tools"},
				{"id": "yolo", "name": "YOLO", "description": "Auto-approves all tools"},
			}, "currentModeId": "default"}})
			// Gemini CLI sends its slash commands right after the session
			// starts (acpSessionManager.ts: sendAvailableCommands).
			r.update(obj{"sessionUpdate": "available_commands_update", "availableCommands": []obj{{"name": "memory", "description": "Manage memory"}}})
		case m.Method == "session/prompt":
			r.prompt(m)
		case m.Method == "session/cancel":
			// No turn is running: nothing to cancel.
		case m.Method != "" && len(m.ID) > 0:
			r.fail(m.ID, -32601, "Method not found", m.Method)
		default:
			fmt.Fprintf(stderr, "fakecli: acp: ignoring %s\n", m.Method)
		}
	}
	return 0
}

// readACP sends each stdin line as a message until stdin ends; lines that
// are not JSON-RPC are reported on stderr and skipped, as the SDK logs a
// line it cannot parse.
func readACP(in io.Reader, stderr io.Writer) <-chan acpIn {
	ch := make(chan acpIn)
	go func() { // ends at the end of stdin; the process ends with it or before
		defer close(ch)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var m acpIn
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
				fmt.Fprintf(stderr, "Failed to parse JSON message: %.200q\n", sc.Bytes())
				continue
			}
			ch <- m
		}
	}()
	return ch
}

func (r *acpRun) initializeResult() obj {
	if res, ok := r.agentResult(); ok {
		return res
	}
	if r.qwen {
		return obj{"protocolVersion": 1, "agentInfo": obj{"name": "qwen-code", "title": "Qwen Code", "version": "0.15.10"},
			"authMethods":       []obj{{"id": "openai", "name": "Use OpenAI API key", "description": "Requires setting the `OPENAI_API_KEY` environment variable"}},
			"agentCapabilities": obj{"loadSession": true, "promptCapabilities": obj{"image": true, "audio": true, "embeddedContext": true}}}
	}
	return obj{"protocolVersion": 1,
		"authMethods": []obj{{"id": "oauth-personal", "name": "Log in with Google", "description": "Log in with your Google account"},
			{"id": "gemini-api-key", "name": "Gemini API key", "description": "Use an API key with Gemini Developer API", "_meta": obj{"api-key": obj{"provider": "google"}}}},
		"agentInfo": obj{"name": "gemini-cli", "title": "Gemini CLI", "version": "0.61.0"},
		"agentCapabilities": obj{"loadSession": true, "promptCapabilities": obj{"image": true, "audio": true, "embeddedContext": true},
			"mcpCapabilities": obj{"http": true, "sse": true}}}
}

func (r *acpRun) respond(id json.RawMessage, result any) {
	r.o.json(obj{"jsonrpc": "2.0", "id": id, "result": result})
}

func (r *acpRun) fail(id json.RawMessage, code int, msg, data string) {
	r.o.json(obj{"jsonrpc": "2.0", "id": id, "error": obj{"code": code, "message": msg, "data": obj{"details": data}}})
}

func (r *acpRun) update(u obj) {
	r.o.json(obj{"jsonrpc": "2.0", "method": "session/update", "params": obj{"sessionId": r.session, "update": u}})
}

func (r *acpRun) say(text string) {
	r.update(obj{"sessionUpdate": "agent_message_chunk", "content": obj{"type": "text", "text": text}})
}

func (r *acpRun) note(s string) { r.notes = append(r.notes, s) }

// errCancelled: session/cancel arrived during the turn.
var errCancelled = errors.New("cancelled")

// prompt plays one session/prompt turn and answers it.
func (r *acpRun) prompt(m acpIn) {
	var p struct {
		SessionID string    `json:"sessionId"`
		Prompt    []acpPart `json:"prompt"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.SessionID == "" || p.SessionID != r.session {
		r.fail(m.ID, -32602, "Invalid params", "Session not found: "+p.SessionID)
		return
	}
	r.notes = nil
	goal, err := r.parts(p.Prompt)
	if err != nil {
		r.fail(m.ID, -32602, "Invalid params", err.Error())
		return
	}
	prev := r.sc
	r.sc, r.message = parseScenario(goal), ""
	if r.played > 0 && !twoWayDirective.MatchString(goal) && !strings.Contains(goal, "[file:") {
		// A message to the running agent: its own turn, on the file the
		// first turn worked on.
		r.sc.file, r.message = prev.file, firstLine(goal)
	}
	r.played++
	sess := &session{ID: r.session, CLI: r.inv.cli, Goal: goal, Turns: 1}
	sess.path = sessionPath(r.inv, sess.ID)
	if old, err := loadSession(invocation{cli: r.inv.cli, resume: r.session}); err == nil {
		sess = old
		sess.Turns++
	}
	if err := sess.save(); err != nil {
		fmt.Fprintf(r.stderr, "fakecli: save session: %v\n", err)
	}
	r.turns = sess.Turns
	ds := twoWayDirective.FindAllStringSubmatch(goal, -1)
	if len(ds) == 0 {
		ds = [][]string{{"", "ask-edit", r.sc.file}}
	}
	r.say("Let me work on that.")
	if r.sc.name == "slow" && r.slow(max(r.sc.arg, 1)) {
		r.respond(m.ID, obj{"stopReason": "cancelled"})
		return
	}
	for _, d := range ds {
		var err error
		switch name, arg := d[1], d[2]; name {
		case "ask-permission":
			_, cmd, _ := strings.Cut(arg, ":")
			err = r.command(cmd)
		case "ask-permission-repeat":
			err = repeat(arg, func(_, cmd string) error { return r.command(cmd) })
		case "ask-edit":
			err = r.edit(arg)
		case "ask-unknown":
			err = r.unknown()
		default:
			r.note(fmt.Sprintf("Could not %s: ACP has no such request.", name))
		}
		if errors.Is(err, errCancelled) {
			r.respond(m.ID, obj{"stopReason": "cancelled"})
			return
		}
		if err != nil {
			// The end of stdin, or a reply the fake cannot take: the SDK
			// answers the prompt with an internal error.
			r.fail(m.ID, -32603, "Internal error", err.Error())
			return
		}
	}
	r.say(strings.TrimSpace("Done. " + strings.Join(r.notes, " ")))
	result := obj{"stopReason": "end_turn"}
	if r.inv.cli == "gemini" {
		// Gemini CLI's usage of the turn (acpSession.ts: _meta.quota).
		result["_meta"] = obj{"quota": obj{"token_count": obj{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens},
			"model_usage": []obj{{"model": "gemini-2.5-pro", "token_count": obj{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens}}}}}
	}
	r.respond(m.ID, result)
}

// slow plays [scenario:slow:N]: N seconds of work, said each second,
// before the turn's directives; it reports whether a session/cancel ended
// it first.
func (r *acpRun) slow(secs int) bool {
	for i := range secs {
		r.say(fmt.Sprintf("Still working (%d/%d).", i+1, secs))
		tick := time.After(time.Second)
	wait:
		for {
			select {
			case m, ok := <-r.in:
				if !ok || m.Method == "session/cancel" {
					return true
				}
				if m.Method != "" && len(m.ID) > 0 {
					r.fail(m.ID, -32603, "Internal error", "a prompt is already running")
				}
			case <-tick:
				break wait
			}
		}
	}
	return false
}

// ask sends a request of the fake's and waits for its response; a
// session/cancel ends the wait with errCancelled.
func (r *acpRun) ask(method string, params obj) (acpIn, error) {
	id := r.nextID
	r.nextID++
	r.o.json(obj{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for m := range r.in {
		switch {
		case m.Method == "" && string(m.ID) == strconv.Itoa(id):
			return m, nil
		case m.Method == "session/cancel":
			return acpIn{}, errCancelled
		case m.Method != "" && len(m.ID) > 0:
			r.fail(m.ID, -32603, "Internal error", "a prompt is already running")
		default:
			fmt.Fprintf(r.stderr, "fakecli: acp: ignoring %s while waiting for the reply to %d\n", orDefault(m.Method, "a response"), id)
		}
	}
	return acpIn{}, errStdinClosed
}

// allowed asks for toolCall where the agent asks before a tool of kind,
// and otherwise reports the call as started and goes ahead (the selected
// option is then "auto").
func (r *acpRun) allowed(kind string, toolCall obj, options []obj) (string, error) {
	if r.asks(kind) {
		return r.permission(toolCall, options)
	}
	started := obj{"sessionUpdate": "tool_call"}
	for k, v := range toolCall {
		started[k] = v
	}
	started["status"] = "in_progress"
	r.update(started)
	return "auto", nil
}

// permission asks for toolCall with options and returns the selected
// option id ("" for a rejection of any form).
func (r *acpRun) permission(toolCall obj, options []obj) (string, error) {
	m, err := r.ask("session/request_permission", obj{"sessionId": r.session, "options": options, "toolCall": toolCall})
	if err != nil {
		return "", err
	}
	if m.Error != nil {
		// The SDK rejects the awaited request; the tool call fails.
		return "", nil
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	_ = json.Unmarshal(m.Result, &res)
	if res.Outcome.Outcome != "selected" || res.Outcome.OptionID == "cancel" {
		return "", nil
	}
	for _, o := range options {
		if o["optionId"] == res.Outcome.OptionID {
			return res.Outcome.OptionID, nil
		}
	}
	return "", fmt.Errorf("the client selected %q, which was not offered", res.Outcome.OptionID)
}

var toolSeq int

// callID is a tool call id in Gemini CLI's form (name-millis-seq).
func callID(name string) string {
	toolSeq++
	return fmt.Sprintf("%s-%d-%d", name, os.Getpid(), toolSeq)
}

// rejected is what the model is told of a rejected tool call (Gemini CLI:
// `Tool "NAME" was canceled by the user.`).
func rejected(tool string) string { return fmt.Sprintf("Tool %q was canceled by the user.", tool) }

func (r *acpRun) command(cmd string) error {
	tool := "run_shell_command"
	id := callID(tool)
	call := obj{"toolCallId": id, "status": "pending", "title": cmd, "content": []obj{}, "locations": []obj{}, "kind": "execute"}
	options := []obj{
		{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
		{"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
		{"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
	}
	if r.qwen {
		call["rawInput"] = obj{"command": cmd, "description": "Run " + cmd, "is_background": false}
		root := strings.Fields(cmd + " x")[0]
		options = []obj{
			{"optionId": "proceed_always_project", "name": "Always Allow in project: " + root, "kind": "allow_always"},
			{"optionId": "proceed_always_user", "name": "Always Allow for user: " + root, "kind": "allow_always"},
			{"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
			{"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
		}
	}
	opt, err := r.allowed("bash", call, options)
	if err != nil {
		return err
	}
	if opt == "" {
		r.note(fmt.Sprintf("Did not run `%s`: %s", cmd, rejected(tool)))
		return nil
	}
	r.update(obj{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "title": cmd,
		"content": []obj{{"type": "content", "content": obj{"type": "text", "text": "fakecli ran: " + cmd}}}, "locations": []obj{}, "kind": "execute"})
	r.note(fmt.Sprintf("Ran `%s`.", cmd))
	return nil
}

func (r *acpRun) edit(name string) error {
	path, before, created, ok := editTarget(name, r.note)
	if !ok {
		return nil
	}
	after := string(before) + fmt.Sprintf("fake %s edited this with the owner's permission (turn %d)\n", r.inv.cli, r.turns)
	if r.message != "" {
		after += "message: " + r.message + "\n"
	}
	tool, title := "replace", name+": "+firstLine(string(before))+" => "+firstLine(after)
	diff := obj{"type": "diff", "path": path, "oldText": string(before), "newText": after, "_meta": obj{"kind": "modify"}}
	if created {
		tool, title = "write_file", "Writing to "+name
		diff = obj{"type": "diff", "path": path, "oldText": "", "newText": after, "_meta": obj{"kind": "add"}}
	}
	id := callID(tool)
	call := obj{"toolCallId": id, "status": "pending", "title": title, "content": []obj{diff}, "locations": []obj{{"path": path}}, "kind": "edit"}
	options := []obj{
		{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
		{"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
		{"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
	}
	if r.qwen {
		// Qwen Code: oldText "" for a new file, rawInput, "Allow All Edits".
		delete(diff, "_meta")
		call["rawInput"] = obj{"file_path": path, "old_string": string(before), "new_string": after}
		options[0]["name"] = "Allow All Edits"
	}
	opt, err := r.allowed("edit", call, options)
	if err != nil {
		return err
	}
	if opt == "" {
		r.note(fmt.Sprintf("Did not edit %s: %s", name, rejected(tool)))
		return nil
	}
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		r.update(obj{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "failed",
			"content": []obj{{"type": "content", "content": obj{"type": "text", "text": err.Error()}}}, "kind": "edit"})
		r.note("Could not write " + name + ": " + err.Error())
		return nil
	}
	r.update(obj{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "title": title,
		"content": []obj{diff}, "locations": []obj{{"path": path}}, "kind": "edit"})
	r.note("Edited " + name + ".")
	return nil
}

// unknown asks for fs/read_text_file, which a client that advertised no
// fs capability must refuse.
func (r *acpRun) unknown() error {
	m, err := r.ask("fs/read_text_file", obj{"sessionId": r.session, "path": filepath.Join(cwd(), "README.md")})
	if err != nil {
		return err
	}
	if m.Error != nil {
		r.note(fmt.Sprintf("The fs/read_text_file request got error %d (%s).", m.Error.Code, m.Error.Message))
		return nil
	}
	r.note("The fs/read_text_file request was answered.")
	return nil
}
