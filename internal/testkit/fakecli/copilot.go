package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// parseCopilot accepts `copilot [flags] --prompt=…`.
func parseCopilot(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var allowAllTools, allowAll, noAutoUpdate, silent, acp, stdio bool
	var format string
	f := newFlags("copilot", stderr)
	f.boolean(&acp, "acp")
	f.boolean(&stdio, "stdio")
	f.boolean(&allowAllTools, "allow-all-tools")
	f.boolean(&allowAll, "allow-all", "yolo")
	f.boolean(&noAutoUpdate, "no-auto-update")
	f.boolean(&silent, "s", "silent")
	f.str(&format, "output-format")
	f.str(&inv.model, "model")
	f.str(&inv.resume, "resume")
	f.str(&inv.prompt, "p", "prompt")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	if acp {
		// The ACP server (acp.go); its model comes from COPILOT_MODEL.
		inv.acp = true
		if inv.prompt != "" || format != "" || len(pos) != 0 {
			return inv, usagef("--acp takes its prompts over ACP, not --prompt or --output-format")
		}
		return inv, nil
	}
	switch {
	case format != "json":
		return inv, fmt.Errorf("fakecli: only --output-format json is scripted, got %q", format)
	case len(pos) != 0:
		return inv, usagef("unexpected arguments %q", pos)
	case inv.prompt == "":
		return inv, usagef("missing --prompt")
	}
	// Without them, view is allowed and apply_patch and bash are denied
	// (copilot-permission-denied.jsonl).
	inv.readOnly = !allowAllTools && !allowAll
	return inv, nil
}

type copilotStyle struct {
	o      out
	sess   *session
	prompt string
	seq    int
	last   string
	files  []string
}

func newCopilot(o out, inv invocation, s *session) emitter {
	return &copilotStyle{o: o, sess: s, prompt: inv.prompt}
}

func (c *copilotStyle) event(typ string, data obj, ephemeral bool) {
	ev := obj{"type": typ, "data": data, "id": newID("copilot"), "timestamp": now(), "parentId": newID("copilot")}
	if ephemeral {
		ev["ephemeral"] = true
	}
	c.o.json(ev)
}

func (c *copilotStyle) callID() string {
	c.seq++
	return fmt.Sprintf("call_%020d", c.seq)
}

func (c *copilotStyle) start() {
	c.event("session.mcp_servers_loaded", obj{"servers": []any{}}, true)
	c.event("session.background_tasks_changed", obj{}, true)
	c.event("user.message", obj{"content": c.prompt, "transformedContent": "<current_datetime>" + now() + "</current_datetime>\n\n" + c.prompt}, false)
	c.event("assistant.turn_start", obj{"turnId": "0"}, false)
}

func (c *copilotStyle) text(s string) {
	c.last = s
	id := newID("copilot")
	c.event("assistant.message_delta", obj{"messageId": id, "deltaContent": s}, true)
	c.event("assistant.message", obj{"messageId": id, "model": "gpt-5.4", "content": s, "toolRequests": []any{}}, false)
}

func (c *copilotStyle) edit(path string, created bool, _, after string) {
	id := c.callID()
	verb, kind := "Update", "edit"
	if created {
		verb, kind = "Add", "create"
	}
	patch := fmt.Sprintf("*** Begin Patch\n*** %s File: %s\n+%s*** End Patch\n", verb, path, strings.TrimSuffix(after, "\n"))
	c.event("tool.execution_start", obj{"toolCallId": id, "toolName": "apply_patch", "arguments": patch, "toolTitle": "Applying patch"}, false)
	c.event("tool.execution_complete", obj{"toolCallId": id, "success": true, "fileEdits": []obj{{"path": path, "kind": kind}},
		"result": obj{"content": "Modified 1 file(s): " + path}}, false)
	c.files = append(c.files, path)
	c.last = ""
}

// deniedEdit is apply_patch refused without --allow-all-tools
// (copilot-permission-denied.jsonl).
func (c *copilotStyle) deniedEdit(path string) {
	id := c.callID()
	patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n+x\n*** End Patch\n", path)
	c.event("tool.execution_start", obj{"toolCallId": id, "toolName": "apply_patch", "arguments": patch, "toolTitle": "Applying patch"}, false)
	c.event("tool.execution_complete", obj{"toolCallId": id, "success": false, "error": obj{"message": "Permission denied because no interactive user response was available. Retry in an interactive session so the user can approve it, or try an alternative that does not require this permission.", "code": "denied"}}, false)
	c.last = ""
}

func (c *copilotStyle) command(cmd, output string, exit int) {
	id := c.callID()
	c.event("tool.execution_start", obj{"toolCallId": id, "toolName": "bash", "arguments": obj{"command": cmd, "description": "Check the result"}, "toolTitle": "Running command"}, false)
	c.event("tool.shell_output", obj{"toolCallId": id, "stream": "stdout", "text": output, "sequence": 0}, true)
	c.event("tool.execution_complete", obj{"toolCallId": id, "success": true, "shellExecution": obj{"exitCode": exit},
		"result": obj{"content": fmt.Sprintf("%s<shellId: 0 completed with exit code %d>", output, exit)}}, false)
	c.last = ""
}

func (c *copilotStyle) commandStarted(cmd string) {
	c.event("tool.execution_start", obj{"toolCallId": c.callID(), "toolName": "bash", "arguments": obj{"command": cmd, "description": "Run the long test suite"}, "toolTitle": "Running command"}, false)
}

func (c *copilotStyle) result(exitCode int, premium float64) {
	files := c.files
	if files == nil {
		files = []string{}
	}
	c.o.json(obj{"type": "result", "timestamp": now(), "sessionId": c.sess.ID, "exitCode": exitCode,
		"usage": obj{"premiumRequests": premium, "totalApiDurationMs": 48, "sessionDurationMs": time.Second.Milliseconds(),
			"codeChanges": obj{"linesAdded": len(files), "linesRemoved": 0, "filesModified": files}}})
}

func (c *copilotStyle) finish(summary string) {
	if c.last != summary {
		c.text(summary)
	}
	c.event("assistant.turn_end", obj{"turnId": "0"}, false)
	c.event("assistant.idle", obj{}, true)
	c.result(0, 1)
}

func (c *copilotStyle) fail(msg string) {
	c.event("session.error", obj{"errorType": "query", "message": msg, "statusCode": 500}, false)
	c.event("assistant.idle", obj{}, true)
	c.result(1, 0)
}
