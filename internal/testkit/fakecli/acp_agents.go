package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// The ACP agents the fake plays besides Gemini CLI and Qwen Code:
//
//	copilot --acp [--stdio]      Copilot CLI's ACP server; model in COPILOT_MODEL
//	opencode acp [--cwd DIR]     OpenCode's ACP agent; model and permissions in OPENCODE_CONFIG_CONTENT
//	pi-agent [--no-images]       an ACP agent Fetch has no code for (its generic harness, acp:pi-agent)
//
// Fetch is never built for pi-agent: tests install the fake under that
// name in an image of their own. With --no-images it declares no image
// prompts. OpenCode asks permission for a command or an edit only where
// its configuration says "ask" (by default it runs both without asking,
// HARNESSES.md §6.2). Every agent says in its final message what
// non-text parts its prompt had ("Got an image part (image/png, N
// bytes)." and "Got a link to URI."), so that tests can see what
// arrived.

// piAgent is the program name of the generic ACP agent.
const piAgent = "pi-agent"

// parsePiAgent accepts `pi-agent [--no-images]`.
func parsePiAgent(args []string, stderr io.Writer) (invocation, error) {
	inv := invocation{acp: true}
	f := newFlags(piAgent, stderr)
	f.boolean(&inv.noImages, "no-images")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	if len(pos) != 0 {
		return inv, usagef("unexpected arguments %q", pos)
	}
	return inv, nil
}

// agentResult is initialize's result for the agents of this file; ok is
// false for the others (acp.go's).
func (r *acpRun) agentResult() (obj, bool) {
	caps := func(image bool) obj {
		return obj{"loadSession": true, "promptCapabilities": obj{"image": image, "audio": false, "embeddedContext": true}}
	}
	switch r.inv.cli {
	case "copilot":
		return obj{"protocolVersion": 1, "agentInfo": obj{"name": "Copilot", "version": "1.0.102"},
			"authMethods": []obj{}, "agentCapabilities": caps(true)}, true
	case "opencode":
		return obj{"protocolVersion": 1, "agentInfo": obj{"name": "OpenCode", "version": "1.18.33"},
			"authMethods":       []obj{{"id": "opencode-login", "name": "Login with opencode", "description": "Run `opencode auth login` in the terminal"}},
			"agentCapabilities": caps(true)}, true
	case piAgent:
		return obj{"protocolVersion": 1, "agentInfo": obj{"name": piAgent, "version": "0.0.1"},
			"authMethods": []obj{}, "agentCapabilities": caps(r.takesImages())}, true
	}
	return nil, false
}

// takesImages tells whether the agent's initialize declares image
// prompts: all do but pi-agent --no-images.
func (r *acpRun) takesImages() bool { return !r.inv.noImages }

// acpPart is one block of a session/prompt.
type acpPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	URI      string `json:"uri"`
}

// parts reads a prompt's blocks: its text, joined, and a note for each
// other block. An image the agent did not declare it takes, or whose data
// is not base64, is refused like the SDK's schema check refuses it.
func (r *acpRun) parts(blocks []acpPart) (string, error) {
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "image":
			if !r.takesImages() {
				return "", fmt.Errorf("an image part, but this agent declared no image prompts")
			}
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil || b.MimeType == "" {
				return "", fmt.Errorf("an image part without a mimeType or base64 data")
			}
			r.note(fmt.Sprintf("Got an image part (%s, %d bytes).", b.MimeType, len(data)))
		case "resource_link":
			r.note("Got a link to " + b.URI + ".")
		default:
			r.note("Got a " + b.Type + " part.")
		}
	}
	return strings.Join(text, "\n"), nil
}

// asks tells whether the agent asks before a tool of kind ("bash",
// "edit"): OpenCode only where OPENCODE_CONFIG_CONTENT's permission says
// "ask"; the others always.
func (r *acpRun) asks(kind string) bool {
	if r.inv.cli != "opencode" {
		return true
	}
	var cfg struct {
		Permission map[string]any `json:"permission"`
	}
	_ = json.Unmarshal([]byte(os.Getenv("OPENCODE_CONFIG_CONTENT")), &cfg) // no configuration: the defaults
	return cfg.Permission[kind] == "ask"
}
