package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// parseGemini accepts `gemini [flags] --prompt=…`.
func parseGemini(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var yolo, skipTrust, acp, experimentalACP bool
	var format, approval string
	f := newFlags("gemini", stderr)
	f.boolean(&yolo, "y", "yolo")
	f.boolean(&skipTrust, "skip-trust")
	f.boolean(&acp, "acp")
	f.boolean(&experimentalACP, "experimental-acp")
	f.str(&format, "o", "output-format")
	f.str(&approval, "approval-mode")
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
	switch approval {
	case "", "default", "auto_edit", "yolo", "plan":
	default:
		return inv, usagef("Invalid values:\n  Argument: approval-mode, Given: %q, Choices: \"default\", \"auto_edit\", \"yolo\", \"plan\"", approval)
	}
	// Without --yolo (or auto_edit), headless Gemini offers the model no
	// write or shell tools (gemini-default-approval-readonly.jsonl).
	inv.readOnly = !yolo && approval != "yolo" && approval != "auto_edit"
	switch {
	case yolo && approval != "" && approval != "yolo":
		return inv, usagef("Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead.")
	case format != "stream-json":
		return inv, fmt.Errorf("fakecli: only --output-format stream-json is scripted, got %q", format)
	case len(pos) != 0:
		return inv, usagef("unexpected arguments %q", pos)
	case inv.prompt == "":
		return inv, usagef("missing --prompt")
	case !skipTrust && os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") != "true":
		// The real CLI exits 55 here; see gemini-error-untrusted-folder.
		return inv, exitError{55, "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode."}
	}
	return inv, nil
}

type geminiStyle struct {
	o      out
	sess   *session
	prompt string
	seq    int
	last   string
}

func newGemini(o out, inv invocation, s *session) emitter {
	return &geminiStyle{o: o, sess: s, prompt: inv.prompt}
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func (g *geminiStyle) toolID(name string) string {
	g.seq++
	return fmt.Sprintf("%s__%s_%d_%d", name, name, time.Now().UnixMilli(), g.seq)
}

func (g *geminiStyle) start() {
	g.o.json(obj{"type": "init", "timestamp": now(), "session_id": g.sess.ID, "model": "auto"})
	g.o.json(obj{"type": "message", "timestamp": now(), "role": "user", "content": g.prompt})
}

// text streams s as two deltas, like the real CLI.
func (g *geminiStyle) text(s string) {
	g.last = s
	half := len(s) / 2
	for half > 0 && half < len(s) && s[half]&0xC0 == 0x80 {
		half++
	}
	for _, part := range []string{s[:half], s[half:]} {
		if part != "" {
			g.o.json(obj{"type": "message", "timestamp": now(), "role": "assistant", "content": part, "delta": true})
		}
	}
}

func (g *geminiStyle) edit(path string, created bool, before, after string) {
	name, params := "replace", obj{"file_path": path, "old_string": before, "new_string": after, "instruction": "Append the line"}
	if created {
		name, params = "write_file", obj{"file_path": path, "content": after}
	}
	id := g.toolID(name)
	g.o.json(obj{"type": "tool_use", "timestamp": now(), "tool_name": name, "tool_id": id, "parameters": params})
	g.o.json(obj{"type": "tool_result", "timestamp": now(), "tool_id": id, "status": "success"})
	g.last = ""
}

func (g *geminiStyle) command(cmd, output string, exit int) {
	id := g.toolID("run_shell_command")
	g.o.json(obj{"type": "tool_use", "timestamp": now(), "tool_name": "run_shell_command", "tool_id": id, "parameters": obj{"command": cmd, "description": "Check the result"}})
	if exit != 0 {
		output += fmt.Sprintf("\nExit Code: %d", exit)
	}
	g.o.json(obj{"type": "tool_result", "timestamp": now(), "tool_id": id, "status": "success", "output": output})
	g.last = ""
}

func (g *geminiStyle) commandStarted(cmd string) {
	g.o.json(obj{"type": "tool_use", "timestamp": now(), "tool_name": "run_shell_command", "tool_id": g.toolID("run_shell_command"), "parameters": obj{"command": cmd, "description": "Run the long test suite"}})
}

func (g *geminiStyle) stats() obj {
	return obj{"total_tokens": fakeInputTokens + fakeOutputTokens, "input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens,
		"cached": 0, "input": fakeInputTokens, "duration_ms": 448, "tool_calls": g.seq}
}

func (g *geminiStyle) finish(summary string) {
	if g.last != summary {
		g.text(summary)
	}
	g.o.json(obj{"type": "result", "timestamp": now(), "status": "success", "stats": g.stats()})
}

func (g *geminiStyle) fail(msg string) {
	g.o.json(obj{"type": "result", "timestamp": now(), "status": "error", "error": obj{"type": "unknown", "message": "[API Error: " + msg + "]"}, "stats": g.stats()})
}
