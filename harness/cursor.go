package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CursorVersion is the Cursor Agent CLI the adapter targets. Cursor ships
// the CLI with a curl installer and no version scheme we could pin; the
// adapter follows the output format in Cursor's docs snapshot of that date.
const CursorVersion = "docs-2026-08-25"

// Environment variables Cursor Agent reads.
const envCursorAPIKey = "CURSOR_API_KEY"

// CursorAdapter drives Cursor Agent (`cursor-agent -p --output-format
// stream-json --force --trust`). Without --force, headless edits are only
// proposed. Its stream has no usage data, and its result.result is all
// assistant text concatenated without separators, so the summary is the last
// assistant message instead. Failures may end the stream without a result.
type CursorAdapter struct{}

// Name implements Adapter.
func (CursorAdapter) Name() Name { return Cursor }

// Version implements Adapter.
func (CursorAdapter) Version() string { return CursorVersion }

// Invocation implements Adapter.
func (CursorAdapter) Invocation(task Task, creds Credentials) (Invocation, error) {
	if err := validate(task); err != nil {
		return Invocation{}, fmt.Errorf("harness: cursor invocation: %w", err)
	}
	if task.ReadOnly {
		return Invocation{}, readOnlyUnsupported(Cursor)
	}
	argv := []string{"cursor-agent", "-p", "--output-format", "stream-json", "--force", "--trust"}
	if task.Model != "" {
		argv = append(argv, "--model", task.Model)
	}
	if task.ResumeID != "" {
		argv = append(argv, "--resume", task.ResumeID)
	}
	argv = append(argv, "--", Prompt(task))
	return Invocation{Argv: argv, Env: buildEnv(nil, creds, keyNames(CursorAdapter{}.Keys())...)}, nil
}

// Keys implements Adapter.
func (CursorAdapter) Keys() []Key { return []Key{{envCursorAPIKey, true}} }

// Traits implements Adapter. No read-only mode is offered: Cursor's --mode plan|ask is documented (HARNESSES.md §8.2) but was never
// run.
func (CursorAdapter) Traits() Traits { return Traits{ResumeUsage: UsagePerRun} }

// NewParser implements Adapter.
func (CursorAdapter) NewParser(Task) Parser { return &cursorParser{} }

// cursorParser reads Cursor Agent's stream-json.
type cursorParser struct {
	session  string
	lastText string
}

type cursorLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   *claudeMessage  `json:"message"`
	CallID    string          `json:"call_id"`
	ToolCall  json.RawMessage `json:"tool_call"`
	IsError   bool            `json:"is_error"`
	Result    string          `json:"result"`
}

// cursorCall is the one entry of tool_call: {"<kind>ToolCall": {args, result}}
// or {"function": {name, arguments}}.
type cursorCall struct {
	Args      json.RawMessage `json:"args"`
	Result    json.RawMessage `json:"result"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

var cursorIgnored = map[string]bool{"user": true, "thinking": true}

// Parse implements Parser.
func (p *cursorParser) Parse(line []byte, emit func(Event)) {
	if isBlank(line) {
		return
	}
	var l cursorLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" {
		emit(rawEvent(line))
		return
	}
	if l.SessionID != "" && l.SessionID != p.session {
		p.session = l.SessionID
		emit(Event{Kind: KindSession, SessionID: l.SessionID})
	}
	switch {
	case cursorIgnored[l.Type]:
	case l.Type == "system" && l.Subtype == "init":
	case l.Type == "assistant" && l.Message != nil:
		if text := contentText(l.Message.Content); strings.TrimSpace(text) != "" {
			p.lastText = capText(text)
			emit(Event{Kind: KindText, Text: p.lastText})
		}
	case l.Type == "tool_call" && (l.Subtype == "started" || l.Subtype == "completed"):
		if !p.toolCall(l, emit) {
			emit(rawEvent(line))
		}
	case l.Type == "result":
		if l.Subtype == "success" && !l.IsError {
			text := p.lastText
			if text == "" {
				text = capText(l.Result)
			}
			emit(Event{Kind: KindResult, Success: true, Text: text})
			return
		}
		msg := l.Result
		if msg == "" {
			msg = "run ended with " + l.Subtype
		}
		emit(Event{Kind: KindResult, Text: capText(msg)})
	default:
		emit(rawEvent(line))
	}
}

// Flush implements Parser.
func (p *cursorParser) Flush(func(Event)) {}

// toolCall reports whether it understood the line.
func (p *cursorParser) toolCall(l cursorLine, emit func(Event)) bool {
	var calls map[string]cursorCall
	if json.Unmarshal(l.ToolCall, &calls) != nil || len(calls) != 1 {
		return false
	}
	for key, c := range calls {
		kind := strings.TrimSuffix(key, "ToolCall")
		if key == "function" {
			kind, c.Args = c.Name, c.Arguments
		}
		var args struct {
			Path    string `json:"path"`
			Command string `json:"command"`
		}
		_ = json.Unmarshal(c.Args, &args) // tools without object args are still tool calls
		if l.Subtype == "started" {
			if kind == "shell" {
				emit(Event{Kind: KindCommand, Tool: kind, ToolID: l.CallID, Command: args.Command})
			} else {
				emit(Event{Kind: KindToolUse, Tool: kind, ToolID: l.CallID, Input: capInput(c.Args)})
			}
			return true
		}
		p.completed(kind, l.CallID, args.Path, c.Result, emit)
	}
	return true
}

// completed reads result {"success":{…}} or {"failure":{…}}.
func (p *cursorParser) completed(kind, id, argPath string, raw json.RawMessage, emit func(Event)) {
	var r struct {
		Success *struct {
			Path     string `json:"path"`
			Stdout   string `json:"stdout"`
			ExitCode *int   `json:"exitCode"`
		} `json:"success"`
		Failure *struct {
			Message  string `json:"message"`
			Error    string `json:"error"`
			Stderr   string `json:"stderr"`
			ExitCode *int   `json:"exitCode"`
		} `json:"failure"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return
	}
	switch {
	case r.Success != nil && kind == "shell":
		code := r.Success.ExitCode
		if code == nil {
			code = exitCode(0)
		}
		emit(Event{Kind: KindCommand, Tool: kind, ToolID: id, ExitCode: code, Text: capText(r.Success.Stdout)})
	case r.Success != nil && (kind == "write" || kind == "edit" || kind == "delete"):
		path := r.Success.Path
		if path == "" {
			path = argPath
		}
		change := ChangeKind("")
		if kind == "delete" {
			change = ChangeDeleted
		}
		emit(Event{Kind: KindFileChanged, Tool: kind, ToolID: id, Path: path, Change: change})
	case r.Failure != nil && kind == "shell" && r.Failure.ExitCode != nil:
		emit(Event{Kind: KindCommand, Tool: kind, ToolID: id, ExitCode: r.Failure.ExitCode, Text: capText(r.Failure.Stderr)})
	case r.Failure != nil:
		msg := r.Failure.Message
		if msg == "" {
			msg = r.Failure.Error
		}
		if msg == "" {
			msg = r.Failure.Stderr
		}
		emit(Event{Kind: KindError, Tool: kind, ToolID: id, Text: capText(msg)})
	}
}
