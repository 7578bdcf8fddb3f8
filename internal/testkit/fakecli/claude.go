package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// parseClaude accepts `claude -p [flags] [--] prompt`.
func parseClaude(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var print, verbose, skip, partial bool
	var format, maxTurns, appendPrompt, permissionMode, inputFormat, promptTool string
	f := newFlags("claude", stderr)
	f.boolean(&print, "p", "print")
	f.boolean(&verbose, "verbose")
	f.boolean(&skip, "dangerously-skip-permissions")
	f.boolean(&partial, "include-partial-messages")
	f.str(&format, "output-format")
	f.str(&inv.model, "model")
	f.str(&inv.resume, "r", "resume")
	f.str(&maxTurns, "max-turns")
	f.str(&appendPrompt, "append-system-prompt")
	f.str(&permissionMode, "permission-mode")
	f.str(&inputFormat, "input-format")
	f.str(&promptTool, "permission-prompt-tool")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	switch permissionMode {
	case "", "acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan":
	default:
		return inv, fmt.Errorf("error: option '--permission-mode <mode>' argument '%s' is invalid. Allowed choices are acceptEdits, auto, bypassPermissions, default, dontAsk, plan.", permissionMode)
	}
	inv.readOnly = permissionMode == "plan" && !skip
	inv.twoWay = inputFormat == "stream-json"
	switch {
	case inputFormat != "" && inputFormat != "text" && inputFormat != "stream-json":
		return inv, fmt.Errorf("error: option '--input-format <format>' argument '%s' is invalid. Allowed choices are text, stream-json.", inputFormat)
	case inv.twoWay && promptTool != "stdio":
		return inv, fmt.Errorf("fakecli: two-way mode is scripted with --permission-prompt-tool stdio only, got %q", promptTool)
	case inv.twoWay && (!print || format != "stream-json" || !verbose):
		return inv, errors.New("Error: --input-format=stream-json requires -p --output-format=stream-json --verbose")
	case inv.twoWay && len(pos) != 0:
		return inv, usagef("two-way mode reads its prompt from stdin, got %d prompt arguments", len(pos))
	case inv.twoWay:
		return inv, nil
	}
	switch {
	case !print:
		return inv, errors.New("fakecli: interactive mode is not scripted; use -p")
	case format != "stream-json":
		return inv, fmt.Errorf("fakecli: only --output-format stream-json is scripted, got %q", format)
	case !verbose:
		return inv, errors.New("Error: When using --print, --output-format=stream-json requires --verbose")
	case skip && os.Geteuid() == 0 && os.Getenv("IS_SANDBOX") != "1":
		return inv, errors.New("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
	case len(pos) != 1:
		return inv, usagef("expected one prompt argument, got %d", len(pos))
	}
	inv.prompt = pos[0]
	return inv, nil
}

// claudeStyle is Claude Code's stream-json, also written by Qwen Code.
type claudeStyle struct {
	o       out
	sess    *session
	model   string
	cwd     string
	qwen    bool
	plan    bool
	texts   []string
	toolSeq int
	turns   int
	denials []obj
	// spentIn and spentOut add up the spend scenario's model calls.
	spentIn, spentOut int
	// twoWay: the run asks for permissions on stdin and offers the
	// question and plan tools.
	twoWay bool
}

func newClaude(o out, inv invocation, s *session) emitter {
	return &claudeStyle{o: o, sess: s, model: orDefault(inv.model, "claude-opus-4-8"), cwd: cwd(), plan: inv.readOnly}
}

func newQwen(o out, inv invocation, s *session) emitter {
	return &claudeStyle{o: o, sess: s, model: orDefault(inv.model, "qwen3-coder-plus"), cwd: cwd(), qwen: true}
}

func (c *claudeStyle) tool(claude, qwen string) string {
	if c.qwen {
		return qwen
	}
	return claude
}

func (c *claudeStyle) start() {
	init := obj{"type": "system", "subtype": "init", "cwd": c.cwd, "session_id": c.sess.ID, "uuid": newID("claude"),
		"tools":       []string{c.tool("Bash", "run_shell_command"), c.tool("Edit", "edit"), c.tool("Read", "read_file"), c.tool("Write", "write_file")},
		"mcp_servers": []any{}, "model": c.model}
	if c.qwen {
		init["permission_mode"], init["qwen_code_version"] = "yolo", "0.15.10"
	} else {
		init["permissionMode"], init["claude_code_version"], init["apiKeySource"] = "bypassPermissions", "2.1.197", "ANTHROPIC_API_KEY"
		if c.twoWay {
			init["permissionMode"] = "default"
			init["tools"] = []string{"AskUserQuestion", "Bash", "Edit", "ExitPlanMode", "Read", "Write"}
		}
		if c.plan {
			init["permissionMode"] = "plan"
		}
	}
	c.o.json(init)
}

func (c *claudeStyle) assistant(block obj) {
	c.turns++
	c.o.json(obj{"type": "assistant", "session_id": c.sess.ID, "parent_tool_use_id": nil, "uuid": newID("claude"),
		"message": obj{"id": "msg_" + newID("opencode")[4:], "type": "message", "role": "assistant", "model": c.model,
			"content": []obj{block}, "stop_reason": nil,
			"usage": obj{"input_tokens": fakeInputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})
}

func (c *claudeStyle) toolResult(id, content string, isError bool) {
	c.o.json(obj{"type": "user", "session_id": c.sess.ID, "parent_tool_use_id": nil, "uuid": newID("claude"),
		"message": obj{"role": "user", "content": []obj{{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}}}})
}

func (c *claudeStyle) toolID() string {
	c.toolSeq++
	return fmt.Sprintf("toolu_%024d", c.toolSeq)
}

func (c *claudeStyle) text(s string) {
	c.texts = append(c.texts, s)
	c.assistant(obj{"type": "text", "text": s})
}

func (c *claudeStyle) edit(path string, created bool, before, after string) {
	id := c.toolID()
	if created {
		c.assistant(obj{"type": "tool_use", "id": id, "name": c.tool("Write", "write_file"), "input": obj{"file_path": path, "content": after}})
		c.toolResult(id, "File created successfully at: "+path, false)
		return
	}
	c.assistant(obj{"type": "tool_use", "id": id, "name": c.tool("Edit", "edit"),
		"input": obj{"file_path": path, "old_string": before, "new_string": after, "replace_all": false}})
	c.toolResult(id, fmt.Sprintf("The file %s has been updated successfully.", path), false)
}

// deniedEdit is an Edit refused in plan mode: the tool_use line, then the
// denial as a tool error (claude-permission-denied.jsonl), and a Bash
// check refused the same way.
func (c *claudeStyle) deniedEdit(path string) {
	id := c.toolID()
	c.assistant(obj{"type": "tool_use", "id": id, "name": "Edit", "input": obj{"file_path": path, "old_string": "", "new_string": "x", "replace_all": false}})
	c.toolResult(id, fmt.Sprintf("Claude requested permissions to write to %s, but you haven't granted it yet.", path), true)
	c.denials = append(c.denials, obj{"tool_name": "Edit", "tool_use_id": id, "tool_input": obj{"file_path": path}})
	id = c.toolID()
	c.assistant(obj{"type": "tool_use", "id": id, "name": "Bash", "input": obj{"command": "cat " + path, "description": "Check the result"}})
	c.toolResult(id, "This command requires approval", true)
	c.denials = append(c.denials, obj{"tool_name": "Bash", "tool_use_id": id, "tool_input": obj{"command": "cat " + path}})
}

func (c *claudeStyle) command(cmd, output string, exit int) {
	id := c.toolID()
	c.assistant(obj{"type": "tool_use", "id": id, "name": c.tool("Bash", "run_shell_command"), "input": obj{"command": cmd, "description": "Check the result"}})
	if exit != 0 {
		output = fmt.Sprintf("Exit code %d\n%s", exit, output)
	}
	c.toolResult(id, strings.TrimRight(output, "\n"), exit != 0)
}

func (c *claudeStyle) commandStarted(cmd string) {
	c.assistant(obj{"type": "tool_use", "id": c.toolID(), "name": c.tool("Bash", "run_shell_command"), "input": obj{"command": cmd, "description": "Run the long test suite"}})
}

func (c *claudeStyle) finish(summary string) {
	if len(c.texts) == 0 || c.texts[len(c.texts)-1] != summary {
		c.text(summary)
	}
	r := obj{"type": "result", "subtype": "success", "is_error": false, "duration_ms": 512, "num_turns": c.turns,
		"result": summary, "session_id": c.sess.ID, "permission_denials": orEmpty(c.denials), "uuid": newID("claude"),
		"usage": obj{"input_tokens": fakeInputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": fakeOutputTokens}}
	if !c.qwen {
		r["total_cost_usd"], r["terminal_reason"], r["stop_reason"] = fakeCostUSD, "completed", "end_turn"
	}
	c.o.json(r)
}

func (c *claudeStyle) fail(msg string) {
	if c.qwen {
		c.o.json(obj{"type": "result", "subtype": "error_during_execution", "is_error": true, "session_id": c.sess.ID,
			"num_turns": c.turns, "usage": obj{"input_tokens": 0, "output_tokens": 0}, "error": obj{"message": msg}})
		return
	}
	c.o.json(obj{"type": "assistant", "session_id": c.sess.ID, "parent_tool_use_id": nil, "error": "unknown", "uuid": newID("claude"),
		"message": obj{"id": newID("claude"), "type": "message", "role": "assistant", "model": "<synthetic>",
			"content": []obj{{"type": "text", "text": "API Error: " + msg}}}})
	c.o.json(obj{"type": "result", "subtype": "success", "is_error": true, "result": "API Error: " + msg,
		"session_id": c.sess.ID, "total_cost_usd": 0, "num_turns": c.turns, "terminal_reason": "completed",
		"usage": obj{"input_tokens": 0, "output_tokens": 0}})
}

// parseQwen accepts `qwen [flags] --prompt=…`.
func parseQwen(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var yolo, acp, experimentalACP bool
	var format, authType string
	f := newFlags("qwen", stderr)
	f.boolean(&yolo, "y", "yolo")
	f.boolean(&acp, "acp")
	f.boolean(&experimentalACP, "experimental-acp")
	f.str(&format, "o", "output-format")
	f.str(&authType, "auth-type")
	f.str(&inv.model, "m", "model")
	f.str(&inv.resume, "r", "resume")
	f.str(&inv.prompt, "p", "prompt")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	if acp || experimentalACP {
		// The prompts come over ACP (acp.go).
		inv.acp = true
		if inv.prompt != "" || len(pos) != 0 {
			return inv, usagef("--acp takes its prompts on stdin, not --prompt")
		}
		return inv, nil
	}
	switch {
	case format != "stream-json":
		return inv, fmt.Errorf("fakecli: only --output-format stream-json is scripted, got %q", format)
	case len(pos) != 0:
		return inv, usagef("unexpected arguments %q", pos)
	case inv.prompt == "":
		return inv, usagef("missing --prompt")
	}
	return inv, nil
}

func orEmpty(s []obj) []obj {
	if s == nil {
		return []obj{}
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func cwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

// Claude Code 2.1.197's prices for claude-opus-4-8 ($5/$25 per Mtok, from
// its own model list), which the spend scenario bills its calls at.
const (
	opusInputPerMtok  = 5.0
	opusOutputPerMtok = 25.0
)

// spent is one model call in the middle of a run (scenario spend): an
// assistant message with its own id and its usage, as Claude Code writes
// one per API call (claude-task.jsonl).
func (c *claudeStyle) spent(in, out int) {
	c.turns++
	c.spentIn += in
	c.spentOut += out
	c.o.json(obj{"type": "assistant", "session_id": c.sess.ID, "parent_tool_use_id": nil, "uuid": newID("claude"),
		"message": obj{"id": "msg_" + newID("opencode")[4:], "type": "message", "role": "assistant", "model": c.model,
			"content": []obj{{"type": "text", "text": fmt.Sprintf("Working through the code (call %d).", c.turns)}}, "stop_reason": nil,
			"usage": obj{"input_tokens": in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out}}})
}

// spentCost is what the spend scenario's calls cost so far.
func (c *claudeStyle) spentCost() float64 {
	return (float64(c.spentIn)*opusInputPerMtok + float64(c.spentOut)*opusOutputPerMtok) / 1e6
}

// interrupted is the end of a run stopped with SIGINT (claude-cancel-sigint.jsonl):
// error_during_execution, terminal_reason aborted_tools, with the cost so far.
func (c *claudeStyle) interrupted() {
	r := obj{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": c.turns,
		"session_id": c.sess.ID, "terminal_reason": "aborted_tools", "uuid": newID("claude"),
		"usage": obj{"input_tokens": c.spentIn, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": c.spentOut}}
	if !c.qwen {
		r["total_cost_usd"] = c.spentCost()
	}
	c.o.json(r)
}

// spendDone ends a spend run that was not stopped, with its whole cost.
func (c *claudeStyle) spendDone(summary string) {
	c.text(summary)
	r := obj{"type": "result", "subtype": "success", "is_error": false, "num_turns": c.turns, "result": summary,
		"session_id": c.sess.ID, "permission_denials": []obj{}, "uuid": newID("claude"), "terminal_reason": "completed",
		"usage": obj{"input_tokens": c.spentIn, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": c.spentOut}}
	if !c.qwen {
		r["total_cost_usd"] = c.spentCost()
	}
	c.o.json(r)
}
