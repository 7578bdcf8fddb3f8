package main

import (
	"fmt"
	"io"
	"strings"
)

// parseCodex accepts `codex exec [resume] [flags] [--] [thread] prompt`
// (`codex app-server` is codex_appserver.go's, dispatched in main.go).
func parseCodex(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	if len(args) == 0 || args[0] != "exec" {
		return inv, usagef("fakecli scripts only `codex exec`")
	}
	args = args[1:]
	resume := len(args) > 0 && args[0] == "resume"
	if resume {
		args = args[1:]
	}
	var jsonOut, bypass, skipGit bool
	var dir, lastMessage string
	f := newFlags("codex exec", stderr)
	f.boolean(&jsonOut, "json")
	f.boolean(&bypass, "dangerously-bypass-approvals-and-sandbox")
	f.boolean(&skipGit, "skip-git-repo-check")
	f.str(&inv.model, "m", "model")
	f.str(&dir, "C", "cd")
	f.str(&lastMessage, "o", "output-last-message")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	if !jsonOut {
		return inv, fmt.Errorf("fakecli: only --json output is scripted")
	}
	switch {
	case resume && len(pos) == 2:
		inv.resume, inv.prompt = pos[0], pos[1]
	case !resume && len(pos) == 1:
		inv.prompt = pos[0]
	default:
		return inv, usagef("unexpected arguments %q", pos)
	}
	return inv, nil
}

type codexStyle struct {
	o    out
	sess *session
	seq  int
	last string
}

func newCodex(o out, _ invocation, s *session) emitter { return &codexStyle{o: o, sess: s} }

func (c *codexStyle) item() string {
	id := fmt.Sprintf("item_%d", c.seq)
	c.seq++
	return id
}

func (c *codexStyle) start() {
	c.o.json(obj{"type": "thread.started", "thread_id": c.sess.ID})
	c.o.json(obj{"type": "turn.started"})
}

func (c *codexStyle) text(s string) {
	c.last = s
	c.o.json(obj{"type": "item.completed", "item": obj{"id": c.item(), "type": "agent_message", "text": s}})
}

func (c *codexStyle) edit(path string, created bool, _, _ string) {
	kind := "update"
	if created {
		kind = "add"
	}
	id := c.item()
	changes := []obj{{"path": path, "kind": kind}}
	c.o.json(obj{"type": "item.started", "item": obj{"id": id, "type": "file_change", "changes": changes, "status": "in_progress"}})
	c.o.json(obj{"type": "item.completed", "item": obj{"id": id, "type": "file_change", "changes": changes, "status": "completed"}})
}

func bashLC(cmd string) string { return "/bin/bash -lc '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'" }

func (c *codexStyle) command(cmd, output string, exit int) {
	id := c.item()
	c.o.json(obj{"type": "item.started", "item": obj{"id": id, "type": "command_execution", "command": bashLC(cmd), "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
	status := "completed"
	if exit != 0 {
		status = "failed"
	}
	c.o.json(obj{"type": "item.completed", "item": obj{"id": id, "type": "command_execution", "command": bashLC(cmd), "aggregated_output": output, "exit_code": exit, "status": status}})
}

func (c *codexStyle) commandStarted(cmd string) {
	c.o.json(obj{"type": "item.started", "item": obj{"id": c.item(), "type": "command_execution", "command": bashLC(cmd), "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
}

func (c *codexStyle) finish(summary string) {
	if c.last != summary {
		c.text(summary)
	}
	c.o.json(obj{"type": "turn.completed", "usage": obj{"input_tokens": fakeInputTokens, "cached_input_tokens": 0,
		"cache_write_input_tokens": 0, "output_tokens": fakeOutputTokens, "reasoning_output_tokens": 0}})
}

func (c *codexStyle) fail(msg string) {
	c.o.json(obj{"type": "error", "message": msg})
	c.o.json(obj{"type": "turn.failed", "error": obj{"message": msg}})
}
