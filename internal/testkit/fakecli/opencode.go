package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// parseOpenCode accepts `opencode run [flags] [--] message…`.
func parseOpenCode(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	if len(args) > 0 && args[0] == "acp" {
		// The ACP agent (acp.go): its model and permissions come from
		// OPENCODE_CONFIG_CONTENT.
		var dir string
		f := newFlags("opencode acp", stderr)
		f.str(&dir, "cwd")
		pos, err := f.parse(args[1:])
		if err != nil {
			return inv, err
		}
		if len(pos) != 0 {
			return inv, usagef("opencode acp takes no message, got %q", pos)
		}
		inv.acp = true
		return inv, nil
	}
	if len(args) == 0 || args[0] != "run" {
		return inv, usagef("fakecli scripts only `opencode run` and `opencode acp`")
	}
	var format, agent string
	var cont, auto bool
	f := newFlags("opencode run", stderr)
	f.str(&format, "format")
	f.str(&agent, "agent")
	f.str(&inv.model, "m", "model")
	f.str(&inv.resume, "s", "session")
	f.boolean(&cont, "c", "continue")
	f.boolean(&auto, "auto")
	pos, err := f.parse(args[1:])
	if err != nil {
		return inv, err
	}
	switch {
	case format != "json":
		return inv, fmt.Errorf("fakecli: only --format json is scripted, got %q", format)
	case inv.model == "":
		return inv, fmt.Errorf("fakecli: pass -m provider/model (without it an offline opencode hangs)")
	case len(pos) == 0:
		return inv, usagef("missing message")
	}
	inv.prompt = strings.Join(pos, " ") // opencode joins the message words
	return inv, nil
}

type openCodeStyle struct {
	o       out
	sess    *session
	message string
	seq     int
	last    string
}

func newOpenCode(o out, _ invocation, s *session) emitter {
	return &openCodeStyle{o: o, sess: s, message: "msg_" + newID("opencode")[4:]}
}

func (c *openCodeStyle) line(typ string, part obj) {
	c.seq++
	part["id"] = fmt.Sprintf("prt_%026d", c.seq)
	part["sessionID"], part["messageID"] = c.sess.ID, c.message
	c.o.json(obj{"type": typ, "timestamp": time.Now().UnixMilli(), "sessionID": c.sess.ID, "part": part})
}

func (c *openCodeStyle) step(reason string) {
	c.line("step_finish", obj{"type": "step-finish", "reason": reason,
		"tokens": obj{"total": fakeInputTokens + fakeOutputTokens, "input": fakeInputTokens, "output": fakeOutputTokens, "reasoning": 0, "cache": obj{"write": 0, "read": 0}},
		"cost":   fakeCostUSD})
	c.line("step_start", obj{"type": "step-start"})
}

func (c *openCodeStyle) start() { c.line("step_start", obj{"type": "step-start"}) }

func (c *openCodeStyle) text(s string) {
	c.last = s
	c.line("text", obj{"type": "text", "text": s, "time": obj{"start": time.Now().UnixMilli(), "end": time.Now().UnixMilli()}})
}

func (c *openCodeStyle) edit(path string, created bool, before, after string) {
	tool, input := "edit", obj{"filePath": path, "oldString": before, "newString": after}
	if created {
		tool, input = "write", obj{"filePath": path, "content": after}
	}
	c.line("tool_use", obj{"type": "tool", "tool": tool, "callID": fmt.Sprintf("toolu_%d", c.seq),
		"state": obj{"status": "completed", "input": input, "output": "Edit applied successfully.",
			"metadata": obj{"filediff": obj{"file": path, "additions": 1, "deletions": 0}}, "title": path}})
	c.step("tool-calls")
	c.last = ""
}

func (c *openCodeStyle) command(cmd, output string, exit int) {
	c.line("tool_use", obj{"type": "tool", "tool": "bash", "callID": fmt.Sprintf("toolu_%d", c.seq),
		"state": obj{"status": "completed", "input": obj{"command": cmd, "description": "Check the result"}, "output": output,
			"metadata": obj{"output": output, "exit": exit, "truncated": false}, "title": cmd}})
	c.step("tool-calls")
	c.last = ""
}

// commandStarted: OpenCode reports a tool only when it completed, so a
// hanging command shows nothing.
func (c *openCodeStyle) commandStarted(string) {}

func (c *openCodeStyle) finish(summary string) {
	if c.last != summary {
		c.text(summary)
	}
	c.line("step_finish", obj{"type": "step-finish", "reason": "stop",
		"tokens": obj{"total": fakeInputTokens + fakeOutputTokens, "input": fakeInputTokens, "output": fakeOutputTokens, "reasoning": 0, "cache": obj{"write": 0, "read": 0}},
		"cost":   fakeCostUSD})
}

func (c *openCodeStyle) fail(msg string) {
	c.o.json(obj{"type": "error", "timestamp": time.Now().UnixMilli(), "sessionID": c.sess.ID,
		"error": obj{"name": "APIError", "data": obj{"message": msg, "statusCode": 500, "isRetryable": false}}})
}
