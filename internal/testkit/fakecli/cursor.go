package main

import (
	"fmt"
	"io"
	"strings"
)

// parseCursor accepts `cursor-agent -p [flags] [--] prompt`.
func parseCursor(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var print, force, trust, partial bool
	var format, workspace string
	f := newFlags("cursor-agent", stderr)
	f.boolean(&print, "p", "print")
	f.boolean(&force, "f", "force", "yolo")
	f.boolean(&trust, "trust")
	f.boolean(&partial, "stream-partial-output")
	f.str(&format, "output-format")
	f.str(&workspace, "workspace")
	f.str(&inv.model, "model")
	f.str(&inv.resume, "resume")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	switch {
	case !print:
		return inv, fmt.Errorf("fakecli: interactive mode is not scripted; use -p")
	case format != "stream-json":
		return inv, fmt.Errorf("fakecli: only --output-format stream-json is scripted, got %q", format)
	case len(pos) != 1:
		return inv, usagef("expected one prompt argument, got %d", len(pos))
	}
	inv.prompt = pos[0]
	return inv, nil
}

type cursorStyle struct {
	o      out
	sess   *session
	prompt string
	model  string
	seq    int
	texts  []string
}

func newCursor(o out, inv invocation, s *session) emitter {
	return &cursorStyle{o: o, sess: s, prompt: inv.prompt, model: orDefault(inv.model, "Claude 4 Sonnet")}
}

func (c *cursorStyle) callID() string {
	c.seq++
	return fmt.Sprintf("toolu_vrtx_%02d", c.seq)
}

func (c *cursorStyle) start() {
	c.o.json(obj{"type": "system", "subtype": "init", "apiKeySource": "env", "cwd": cwd(), "session_id": c.sess.ID, "model": c.model, "permissionMode": "default"})
	c.o.json(obj{"type": "user", "message": obj{"role": "user", "content": []obj{{"type": "text", "text": c.prompt}}}, "session_id": c.sess.ID})
}

func (c *cursorStyle) text(s string) {
	c.texts = append(c.texts, s)
	c.o.json(obj{"type": "assistant", "message": obj{"role": "assistant", "content": []obj{{"type": "text", "text": s}}}, "session_id": c.sess.ID})
}

func (c *cursorStyle) call(id, subtype, kind string, body obj) {
	c.o.json(obj{"type": "tool_call", "subtype": subtype, "call_id": id, "tool_call": obj{kind: body}, "session_id": c.sess.ID})
}

func (c *cursorStyle) edit(path string, created bool, before, after string) {
	id := c.callID()
	if created {
		args := obj{"path": path, "fileText": after, "toolCallId": id}
		c.call(id, "started", "writeToolCall", obj{"args": args})
		c.call(id, "completed", "writeToolCall", obj{"args": args, "result": obj{"success": obj{"path": path, "linesCreated": strings.Count(after, "\n"), "fileSize": len(after)}}})
		return
	}
	args := obj{"path": path, "strReplace": obj{"oldText": before, "newText": after}}
	c.call(id, "started", "editToolCall", obj{"args": args})
	c.call(id, "completed", "editToolCall", obj{"args": args, "result": obj{"success": obj{"path": path, "linesAdded": 1, "linesRemoved": 0}}})
}

func (c *cursorStyle) command(cmd, output string, exit int) {
	id := c.callID()
	args := obj{"command": cmd, "workingDirectory": "", "timeout": 0}
	c.call(id, "started", "shellToolCall", obj{"args": args})
	c.call(id, "completed", "shellToolCall", obj{"args": args, "result": obj{"success": obj{"stdout": output, "stderr": "", "exitCode": exit}}})
}

func (c *cursorStyle) commandStarted(cmd string) {
	c.call(c.callID(), "started", "shellToolCall", obj{"args": obj{"command": cmd, "workingDirectory": "", "timeout": 0}})
}

func (c *cursorStyle) finish(summary string) {
	if len(c.texts) == 0 || c.texts[len(c.texts)-1] != summary {
		c.text(summary)
	}
	c.o.json(obj{"type": "result", "subtype": "success", "duration_ms": 5234, "duration_api_ms": 5234, "is_error": false,
		"result": strings.Join(c.texts, ""), "session_id": c.sess.ID, "request_id": newID("cursor")})
}

// fail: Cursor ends the stream without a result and reports on stderr (the
// caller writes stderr).
func (c *cursorStyle) fail(string) {}
