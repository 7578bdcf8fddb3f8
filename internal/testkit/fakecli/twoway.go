package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Claude Code's two-way mode, as the fake plays it:
//
//	claude -p --input-format stream-json --output-format stream-json --verbose --permission-prompt-tool stdio [--permission-mode plan] [--resume ID]
//
// It reads stdin one JSON message a line, as Claude Code 2.1.197 does
// (claude-question-askuserquestion-stdio.txt): an optional initialize
// control_request, answered with a control_response, then the user message
// that carries the prompt. It asks for every tool use with a
// control_request (subtype can_use_tool, the envelope of that capture) and
// waits for the control_response on stdin; an interrupt control_request is
// answered and ends the turn the way claude-cancel-interrupt-control.txt
// shows. After its result line it keeps reading until stdin closes, like
// the real CLI (HARNESSES.md §2.2), and exits then.
//
// The goal's directives, in the order they appear:
//
//	[ask-permission:TOOL:COMMAND]          ask to run COMMAND with TOOL (Bash); allowed, it "runs" it (echoes it); denied, it says so and goes on
//	[ask-permission-repeat:TOOL:COMMAND:N] ask the same N times, whatever the answers (for a loop guard)
//	[ask-edit:PATH]                        ask to edit PATH (relative); allowed, it appends a line to it
//	[ask-question:QUESTION:A|B|…]          AskUserQuestion with options A, B, …; the answer is appended to the scenario's file ([file:NAME]) with the process id
//	[ask-unknown]                          a control_request of a subtype no client serves; it reports the reply's subtype
//	[times:FILE]                           append "req NANOS" to FILE (in the working directory) as each request is written and "rep NANOS" as its reply is read, for latency benchmarks (not in plan mode)
//	[plan]                                 (with --permission-mode plan; plan mode always ends this way) propose a plan with ExitPlanMode; a denial with a message makes it plan again with that message, an allow ends the run with the plan
//
// [scenario:spend:N] (a session's first turn) makes its model calls as the
// one-shot spend does, appending "call N" to the scenario's file at each
// (without a message of its own),
// and an interrupt control_request ends the turn (a result with the cost
// so far): a run paused at its budget.
//
// Without a directive (and not in plan mode) it plays the one-shot
// scenario of the prompt ([scenario:…], the default edit, the answer to a
// question it asked, a rebase) and then reads stdin to its end, so that
// every scenario works in a two-way run too.
// What it does with the answers is scripted; only the messages' shapes
// follow the CLI.

// twoWayDirective finds the directives.
var twoWayDirective = regexp.MustCompile(`\[(ask-permission-repeat|ask-permission|ask-edit|ask-question|ask-unknown|plan)(?::([^\]]*))?\]`)

// maxPlanRounds bounds the revisions of a plan.
const maxPlanRounds = 20

// inMessage is one line of stdin, as far as the fake reads it.
type inMessage struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// readMessages sends each stdin line as a message, until stdin ends; lines
// that are not such JSON are reported on stderr and skipped.
func readMessages(in io.Reader, stderr io.Writer) <-chan inMessage {
	ch := make(chan inMessage)
	go func() { // ends at the end of stdin; the process ends with it or before
		defer close(ch)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var m inMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type == "" {
				fmt.Fprintf(stderr, "fakecli: stdin: not a message: %.200q\n", sc.Bytes())
				continue
			}
			ch <- m
		}
	}()
	return ch
}

// errStdinClosed: stdin ended while the fake waited for a reply.
var errStdinClosed = errors.New("stdin closed while waiting for a reply")

// errInterrupted: an interrupt arrived, or a denial that stops the turn.
var errInterrupted = errors.New("interrupted")

// twoWay is one two-way run of the fake claude.
type twoWay struct {
	c      *claudeStyle
	o      out
	in     <-chan inMessage
	stderr io.Writer
	inv    invocation
	sc     scenario
	notes  []string // what happened, for the summary
	times  string   // [times:FILE]: where requests and replies are timed
}

// approvedPlanPrefix starts the goal of a run that carries out an
// approved plan (harness.ApprovedPlanGoal).
const approvedPlanPrefix = "The user approved this plan"

// asksSomething tells whether goal has a two-way directive besides [plan].
func asksSomething(goal string) bool {
	for _, d := range twoWayDirective.FindAllStringSubmatch(goal, -1) {
		if d[1] != "plan" {
			return true
		}
	}
	return false
}

// timesTag finds [times:FILE].
var timesTag = regexp.MustCompile(`\[times:([^\]\s]+)\]`)

// stamp appends "what NANOS" to the times file, when there is one.
func (t *twoWay) stamp(what string) {
	if t.times == "" || t.inv.readOnly {
		return // a plan-mode run writes nothing, stamps included
	}
	f, err := os.OpenFile(filepath.Join(cwd(), t.times), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(t.stderr, "fakecli: times: %v\n", err)
		return
	}
	fmt.Fprintf(f, "%s %d\n", what, time.Now().UnixNano())
	f.Close()
}

// playTwoWay runs the two-way mode and returns the exit code.
func playTwoWay(inv invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	o := out{w: stdout}
	t := &twoWay{o: o, in: readMessages(stdin, stderr), stderr: stderr, inv: inv}
	prompt, ok := t.firstPrompt()
	if !ok {
		fmt.Fprintln(stderr, "Error: stdin closed before a user message arrived")
		return 1
	}
	inv.prompt = prompt
	var sess *session
	if inv.resume != "" {
		s, err := loadSession(inv)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(stderr, "Error: No conversation found with session ID: %s\n", inv.resume)
			} else {
				fmt.Fprintf(stderr, "Error: %v\n", err)
			}
			return 1
		}
		sess = s
	} else {
		sess = &session{ID: newID("claude"), CLI: "claude", Goal: prompt}
		sess.path = sessionPath(inv, sess.ID)
	}
	sess.Turns++
	// Carrying out an approved plan (harness.ApprovedPlanGoal, in the
	// planning session): the work is the session's first goal — its
	// requests, or else its one-shot scenario on its file.
	approved := !inv.readOnly && inv.resume != "" && strings.Contains(prompt, approvedPlanPrefix)
	if approved && !twoWayDirective.MatchString(prompt) && asksSomething(sess.Goal) {
		prompt = sess.Goal + "\n\n" + prompt
	}
	if !inv.readOnly && parseScenario(prompt).name == "await-message" {
		code := t.awaitMessage(inv, sess, parseScenario(prompt))
		if err := sess.save(); err != nil {
			fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
		}
		t.drain()
		return code
	}
	if sc := parseScenario(prompt); !inv.readOnly && sess.Turns == 1 && sc.name == "spend" {
		code := t.spend(inv, sess, sc)
		if err := sess.save(); err != nil {
			fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
		}
		t.drain()
		return code
	}
	if !inv.readOnly && !twoWayDirective.MatchString(prompt) {
		// No two-way directive: the one-shot scenarios ([scenario:…], a
		// question answered by a resumed run, a rebase, the default edit)
		// play as they do one-shot, then stdin is read to its end.
		code := t.oneShot(inv, sess, prompt, approved)
		if err := sess.save(); err != nil {
			fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
		}
		t.drain()
		return code
	}
	t.inv, t.sc = inv, parseScenario(prompt)
	if sess.Turns > 1 && t.sc.file == defaultFile {
		t.sc.file = parseScenario(sess.Goal).file
	}
	t.c = newClaude(o, inv, sess).(*claudeStyle)
	t.c.twoWay = true
	t.c.start()
	code := t.script(prompt)
	if err := sess.save(); err != nil {
		fmt.Fprintf(stderr, "fakecli: save session: %v\n", err)
	}
	t.drain()
	return code
}

// oneShot plays the one-shot script (scenario.go) for a prompt without
// two-way directives, as play does.
func (t *twoWay) oneShot(inv invocation, sess *session, prompt string, approved bool) int {
	c, ok := lookupCLI(inv.cli)
	if !ok {
		fmt.Fprintf(t.stderr, "Error: unknown CLI %q\n", inv.cli)
		return 1
	}
	sc := parseScenario(sess.Goal)
	if sess.Turns > 1 && sess.Question == "" {
		// A follow-up goal; an approved plan works on the session's file
		// unless it names one.
		follow := parseScenario(prompt)
		if approved && !fileTag.MatchString(prompt) {
			follow.file = sc.file
		}
		sc = follow
	}
	return script(c, inv, sess, sc, c.emitter(t.o, inv, sess), t.stderr)
}

// firstPrompt answers the handshake and returns the first user message.
func (t *twoWay) firstPrompt() (string, bool) {
	for m := range t.in {
		switch m.Type {
		case "control_request":
			t.serve(m)
		case "user":
			if m.Message != nil {
				recordImages(m.Message.Content, t.stderr)
				return contentString(m.Message.Content), true
			}
		}
	}
	return "", false
}

// drain reads stdin until it ends, as Claude Code waits for more input
// after its result.
func (t *twoWay) drain() {
	for m := range t.in {
		if m.Type == "control_request" {
			t.serve(m)
		} else {
			fmt.Fprintf(t.stderr, "fakecli: ignoring a %s message after the result\n", m.Type)
		}
	}
}

// serve answers a control_request that arrives outside a wait:
// initialize and interrupt succeed, anything else is an error.
func (t *twoWay) serve(m inMessage) {
	var req struct {
		Subtype string `json:"subtype"`
	}
	_ = json.Unmarshal(m.Request, &req)
	switch req.Subtype {
	case "initialize":
		// A short form of 2.1.197's reply (the capture lists every command,
		// agent and model).
		t.o.json(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": m.RequestID,
			"response": obj{"commands": []any{}, "agents": []any{}, "output_style": "default", "available_output_styles": []string{"default"},
				"models": []any{}, "account": obj{"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY", "apiProvider": "firstParty"}, "pid": os.Getpid()}}})
	case "interrupt":
		t.o.json(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": m.RequestID}})
	default:
		t.o.json(obj{"type": "control_response", "response": obj{"subtype": "error", "request_id": m.RequestID,
			"error": "Unsupported control request subtype: " + req.Subtype}})
	}
}

// reply is a client's answer to one of the fake's requests.
type reply struct {
	subtype string // "success" or "error"
	allow   bool
	message string
	input   map[string]json.RawMessage // updatedInput
	stop    bool                       // deny with interrupt
	errText string
}

// ask sends a control_request and waits for its reply. An interrupt or
// the end of stdin ends the wait with an error.
func (t *twoWay) ask(request obj) (reply, string, error) {
	id := newID("claude")
	t.stamp("req")
	t.o.json(obj{"type": "control_request", "request_id": id, "request": request})
	for m := range t.in {
		switch {
		case m.Type == "control_response" && m.Response != nil && m.Response.RequestID == id:
			t.stamp("rep")
			r := reply{subtype: m.Response.Subtype, errText: m.Response.Error}
			var body struct {
				Behavior     string                     `json:"behavior"`
				Message      string                     `json:"message"`
				UpdatedInput map[string]json.RawMessage `json:"updatedInput"`
				Interrupt    bool                       `json:"interrupt"`
			}
			_ = json.Unmarshal(m.Response.Response, &body)
			r.allow, r.message, r.input, r.stop = body.Behavior == "allow", body.Message, body.UpdatedInput, body.Interrupt
			return r, id, nil
		case m.Type == "control_request":
			var req struct {
				Subtype string `json:"subtype"`
			}
			_ = json.Unmarshal(m.Request, &req)
			t.serve(m)
			if req.Subtype == "interrupt" {
				return reply{}, id, errInterrupted
			}
		default:
			fmt.Fprintf(t.stderr, "fakecli: ignoring a %s message while waiting for the reply to %s\n", m.Type, id)
		}
	}
	return reply{}, id, errStdinClosed
}

// toolRequest shows a tool use and asks for it: the assistant tool_use
// line, then the can_use_tool request (the order of the capture).
func (t *twoWay) toolRequest(tool string, input obj) (reply, string, error) {
	id := t.c.toolID()
	t.c.assistant(obj{"type": "tool_use", "id": id, "name": tool, "input": input})
	r, _, err := t.ask(obj{"subtype": "can_use_tool", "tool_name": tool, "display_name": tool, "input": input, "tool_use_id": id})
	if err == nil && r.stop {
		err = errInterrupted
	}
	return r, id, err
}

// script plays the directives of prompt and returns the exit code.
func (t *twoWay) script(prompt string) int {
	if m := timesTag.FindStringSubmatch(prompt); m != nil && !filepath.IsAbs(m[1]) && !strings.HasPrefix(filepath.Clean(m[1]), "..") {
		t.times = m[1]
	}
	ds := twoWayDirective.FindAllStringSubmatch(prompt, -1)
	if len(ds) == 0 && !t.inv.readOnly {
		ds = [][]string{{"", "ask-edit", t.sc.file}}
	}
	t.c.text("Let me work on that.")
	for _, d := range ds {
		var err error
		switch name, arg := d[1], d[2]; {
		case t.inv.readOnly && name != "ask-question" && name != "plan":
			continue // plan mode: only questions, then the plan
		case name == "ask-permission":
			tool, cmd, _ := strings.Cut(arg, ":")
			err = t.permission(tool, cmd)
		case name == "ask-permission-repeat":
			err = repeat(arg, t.permission)
		case name == "ask-edit":
			err = t.edit(arg)
		case name == "ask-question":
			err = t.question(arg)
		case name == "ask-unknown":
			err = t.unknown()
		}
		if err != nil {
			return t.end(err)
		}
	}
	if t.inv.readOnly {
		return t.plan()
	}
	summary := "Done. " + strings.Join(t.notes, " ")
	t.c.finish(strings.TrimSpace(summary))
	return 0
}

// end ends a turn that an interrupt or the end of stdin cut short.
func (t *twoWay) end(err error) int {
	if errors.Is(err, errInterrupted) {
		// claude-cancel-interrupt-control.txt: the interrupted tool's
		// rejection, the user's interrupt note, then the result.
		t.o.json(obj{"type": "user", "session_id": t.c.sess.ID, "parent_tool_use_id": nil, "uuid": newID("claude"),
			"message": obj{"role": "user", "content": []obj{{"type": "text", "text": "[Request interrupted by user for tool use]"}}}})
		t.c.interrupted()
		return 1
	}
	fmt.Fprintf(t.stderr, "Error: %v\n", err)
	return 1
}

func (t *twoWay) permission(tool, cmd string) error {
	if tool == "" {
		tool = "Bash"
	}
	r, id, err := t.toolRequest(tool, obj{"command": cmd, "description": "Run " + cmd})
	if err != nil {
		return err
	}
	if !r.allow {
		t.c.toolResult(id, orDefault(r.message, r.errText), true)
		t.note(fmt.Sprintf("Did not run `%s`: %s", cmd, orDefault(r.message, r.errText)))
		return nil
	}
	t.c.toolResult(id, "fakecli ran: "+cmd, false)
	t.note(fmt.Sprintf("Ran `%s`.", cmd))
	return nil
}

// repeat runs an ask-permission-repeat directive ("TOOL:CMD[:N]", three
// times without N): ask calls one request of the CLI's protocol.
func repeat(arg string, ask func(tool, cmd string) error) error {
	i := strings.LastIndex(arg, ":")
	n, err := strconv.Atoi(arg[i+1:])
	if i < 0 || err != nil || n < 1 {
		n, i = 3, len(arg)
	}
	tool, cmd, _ := strings.Cut(arg[:i], ":")
	for range n {
		if err := ask(tool, cmd); err != nil {
			return err
		}
	}
	return nil
}

// editTarget reads the file an edit directive names, inside the working
// directory; ok is false (after a note) when it cannot be edited.
func editTarget(name string, note func(string)) (path string, before []byte, created, ok bool) {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		note(fmt.Sprintf("Refused to edit %q: outside the working directory.", name))
		return "", nil, false, false
	}
	path = filepath.Join(cwd(), name)
	before, err := os.ReadFile(path)
	created = errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		note("Could not read " + name + ": " + err.Error())
		return "", nil, false, false
	}
	return path, before, created, true
}

func (t *twoWay) edit(name string) error {
	path, before, created, ok := editTarget(name, t.note)
	if !ok {
		return nil
	}
	line := "fake claude edited this with the owner's permission\n"
	tool, input := "Write", obj{"file_path": path, "content": line}
	if !created && len(before) > 0 {
		tool, input = "Edit", obj{"file_path": path, "old_string": string(before), "new_string": string(before) + line, "replace_all": false}
	}
	r, id, err := t.toolRequest(tool, input)
	if err != nil {
		return err
	}
	if !r.allow {
		t.c.toolResult(id, orDefault(r.message, r.errText), true)
		t.note(fmt.Sprintf("Did not edit %s: %s", name, orDefault(r.message, r.errText)))
		return nil
	}
	if err := os.WriteFile(path, append(before, line...), 0o644); err != nil {
		t.c.toolResult(id, err.Error(), true)
		t.note("Could not write " + name + ": " + err.Error())
		return nil
	}
	if created {
		t.c.toolResult(id, "File created successfully at: "+path, false)
	} else {
		t.c.toolResult(id, fmt.Sprintf("The file %s has been updated successfully.", path), false)
	}
	t.note("Edited " + name + ".")
	return nil
}

func (t *twoWay) question(arg string) error {
	q, opts, _ := strings.Cut(arg, ":")
	var options []obj
	for _, o := range strings.Split(opts, "|") {
		if o = strings.TrimSpace(o); o != "" {
			options = append(options, obj{"label": o, "description": "Choose " + o})
		}
	}
	questions := []obj{{"question": q, "header": "Question", "options": orEmpty(options), "multiSelect": false}}
	r, id, err := t.toolRequest("AskUserQuestion", obj{"questions": questions})
	if err != nil {
		return err
	}
	var answers map[string]string
	_ = json.Unmarshal(r.input["answers"], &answers)
	answer, ok := answers[q]
	if !r.allow || !ok {
		t.c.toolResult(id, orDefault(r.message, "No answer."), true)
		t.note("Got no answer to " + strconv.Quote(q) + ".")
		return nil
	}
	// The tool result of the capture.
	t.c.toolResult(id, fmt.Sprintf("Your questions have been answered: %q=%q. You can now continue with these answers in mind.", q, answer), false)
	line := fmt.Sprintf("answer: %s (fakecli pid %d)\n", answer, os.Getpid())
	if err := appendFile(t.sc.file, line); err != nil {
		t.note("Could not record the answer: " + err.Error())
		return nil
	}
	t.note(fmt.Sprintf("Recorded your answer %q in %s.", answer, t.sc.file))
	return nil
}

func (t *twoWay) unknown() error {
	r, _, err := t.ask(obj{"subtype": "fetch_unknown_subtype"})
	if err != nil {
		return err
	}
	t.note(fmt.Sprintf("The unknown request got a %s reply (%s).", r.subtype, r.errText))
	return nil
}

// plan proposes a plan with ExitPlanMode until it is allowed, stopped or
// revised too often.
func (t *twoWay) plan() int {
	plan := fmt.Sprintf("1. Append one line to %s.\n2. Check it with cat %s.", t.sc.file, t.sc.file)
	for round := 1; round <= maxPlanRounds; round++ {
		t.c.text("Here is my plan.")
		r, id, err := t.toolRequest("ExitPlanMode", obj{"plan": plan})
		if err != nil {
			return t.end(err)
		}
		if r.allow {
			t.c.toolResult(id, "User has approved your plan. You can now start coding.", false)
			t.c.finish(plan)
			return 0
		}
		t.c.toolResult(id, orDefault(r.message, r.errText), true)
		plan = fmt.Sprintf("%s\n%d. As you asked: %s", plan, strings.Count(plan, "\n")+2, firstLine(orDefault(r.message, r.errText)))
	}
	t.c.finish("I stopped revising the plan after " + strconv.Itoa(maxPlanRounds) + " rounds.")
	return 0
}

func (t *twoWay) note(s string) { t.notes = append(t.notes, s) }

// appendFile appends line to name in the working directory.
func appendFile(name, line string) error {
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return fmt.Errorf("refusing to write %q outside the working directory", name)
	}
	f, err := os.OpenFile(filepath.Join(cwd(), name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// contentString is a user message's content: a string, or the text of its
// blocks.
func contentString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// awaitWait bounds how long [scenario:await-message] waits.
const awaitWait = 2 * time.Minute

// awaitMessage plays [scenario:await-message]: the turn works until a user
// message arrives on stdin (Claude Code queues a message typed while it
// works), appends "turn 1" to the scenario's file and ends the turn with a
// result; then, as Claude Code does with a queued message, it takes the
// message as a turn of its own: it appends "message: TEXT" (its first
// line) and ends that turn with a result too.
func (t *twoWay) awaitMessage(inv invocation, sess *session, sc scenario) int {
	c, _ := lookupCLI(inv.cli)
	em := c.emitter(t.o, inv, sess)
	em.start()
	em.text("Working on it; I will read what you send meanwhile.")
	var msg string
	timeout := time.After(awaitWait)
wait:
	for {
		select {
		case m, ok := <-t.in:
			if !ok {
				fmt.Fprintln(t.stderr, "Error: stdin closed while waiting for a message")
				return 1
			}
			if m.Type == "control_request" {
				t.serve(m)
				continue
			}
			if m.Type == "user" && m.Message != nil {
				msg = contentString(m.Message.Content)
				break wait
			}
		case <-timeout:
			em.fail("no message came")
			return 1
		}
	}
	if err := editFile(em, sc.file, "turn 1"); err != nil {
		return failEdit(em, c, err)
	}
	em.finish("The first turn is done.")
	sess.Turns++
	em.text("Now your message: " + firstLine(msg))
	if err := editFile(em, sc.file, "message: "+firstLine(msg)); err != nil {
		return failEdit(em, c, err)
	}
	em.finish("Done what your message asked.")
	return 0
}

// imagesFile is where the fakes record the pictures they were given in
// their protocol's form, one line each, in the working directory: a real
// edit, which lands on the task's branch.
const imagesFile = "IMAGES.txt"

// recordImages appends "image: MEDIA_TYPE N bytes" to imagesFile for each
// image block of a Claude user message's content.
func recordImages(raw json.RawMessage, stderr io.Writer) {
	var blocks []struct {
		Type   string `json:"type"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      []byte `json:"data"`
		} `json:"source"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		if b.Type == "image" && b.Source.Type == "base64" {
			appendImage(fmt.Sprintf("image: %s %d bytes", b.Source.MediaType, len(b.Source.Data)), stderr)
		}
	}
}

// appendImage appends line to imagesFile.
func appendImage(line string, stderr io.Writer) {
	f, err := os.OpenFile(filepath.Join(cwd(), imagesFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "fakecli: images: %v\n", err)
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// spend plays the spend scenario in a two-way run: each model call also
// appends "call N" to the scenario's file (work to record), and an
// interrupt control_request ends the turn as
// claude-cancel-interrupt-control.txt shows (answered, then a result with
// the cost so far); the process then waits for more input, as the CLI
// does.
func (t *twoWay) spend(inv invocation, sess *session, sc scenario) int {
	c, ok := lookupCLI(inv.cli)
	if !ok {
		fmt.Fprintf(t.stderr, "Error: unknown CLI %q\n", inv.cli)
		return 1
	}
	em := c.emitter(t.o, inv, sess)
	sp, ok := em.(spender)
	if !ok {
		return spend(c, sc, em, t.stderr)
	}
	secs := 30
	if sc.arg >= 0 {
		secs = sc.arg
	}
	em.start()
	tick := time.NewTicker(cmp.Or(sc.every, spendEvery))
	defer tick.Stop()
	end := time.After(time.Duration(secs) * time.Second)
	for calls := 1; ; {
		select {
		case <-tick.C:
			// The call's work, written as a tool would without a message of
			// its own: one usage report per call.
			if err := appendLine(sc.file, fmt.Sprintf("call %d", calls)); err != nil {
				return failEdit(em, c, err)
			}
			sp.spent(spendInput, spendOutput)
			calls++
		case m, open := <-t.in:
			if !open {
				sp.interrupted()
				return 1
			}
			if m.Type != "control_request" {
				fmt.Fprintf(t.stderr, "fakecli: ignoring a %s message while spending\n", m.Type)
				continue
			}
			var req struct {
				Subtype string `json:"subtype"`
			}
			_ = json.Unmarshal(m.Request, &req)
			t.serve(m)
			if req.Subtype == "interrupt" {
				sp.interrupted()
				return 0
			}
		case <-end:
			sp.spendDone(fmt.Sprintf("Done after %d seconds of model calls.", secs))
			return 0
		}
	}
}

// appendLine appends line to the file name in the working directory.
func appendLine(name, line string) error {
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return fmt.Errorf("refusing to edit %q outside the working directory", name)
	}
	f, err := os.OpenFile(filepath.Join(cwd(), name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
