package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// acpLine is a line the fake writes, as far as these tests read it.
type acpLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string          `json:"sessionUpdate"`
			Content       json.RawMessage `json:"content"`
		} `json:"update"`
		ToolCall struct {
			Kind     string          `json:"kind"`
			Title    string          `json:"title"`
			RawInput json.RawMessage `json:"rawInput"`
		} `json:"toolCall"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// playACPInProcess runs the fake as cli --acp over pipes; reply answers
// each of its lines (send writes a client line).
func playACPInProcess(t *testing.T, cli string, reply func(l acpLine, raw string, send func(string))) (int, string) {
	t.Helper()
	return playACPAs(t, invocation{cli: cli, acp: true}, reply)
}

// playACPAs is playACPInProcess for the invocation inv.
func playACPAs(t *testing.T, inv invocation, reply func(l acpLine, raw string, send func(string))) (int, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		c := playACP(inv, inR, outW, &stderr)
		outW.Close()
		code <- c
	}()
	// The client's lines go through a writer of their own, so that the
	// test never waits on the fake while the fake waits on the test.
	lines := make(chan string, 16)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for s := range lines {
			if _, err := io.WriteString(inW, s+"\n"); err != nil {
				t.Error(err)
			}
		}
		inW.Close()
	}()
	closed := false
	send := func(s string) {
		if s == "" {
			if !closed {
				closed = true
				close(lines)
			}
			return
		}
		lines <- s
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		var l acpLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		reply(l, sc.Text(), send)
	}
	send("")
	<-written
	return <-code, stderr.String()
}

// TestACPInProcess: the handshake, a rejected command (the fake reports the
// rejection and goes on), an allowed edit that really writes, the usage of
// Gemini CLI's prompt result, and the end at the close of stdin.
func TestACPInProcess(t *testing.T) {
	for _, cli := range []string{"gemini", "qwen"} {
		t.Run(cli, func(t *testing.T) {
			var session string
			var asked []string
			var result string
			code, stderr := playACPInProcess(t, cli, func(l acpLine, raw string, send func(string)) {
				switch {
				case l.Method == "" && string(l.ID) == "1":
					send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd() + `","mcpServers":[]}}`)
				case l.Method == "" && string(l.ID) == "2":
					var r struct{ SessionID string }
					_ = json.Unmarshal(l.Result, &r)
					session = r.SessionID
					send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + session + `","prompt":[{"type":"text","text":"tidy [ask-permission:Bash:git push --force] [ask-edit:a.txt]"}]}}`)
				case l.Method == "session/request_permission":
					asked = append(asked, l.Params.ToolCall.Kind)
					if (cli == "qwen") != (len(l.Params.ToolCall.RawInput) > 0) {
						t.Errorf("%s request rawInput %s", cli, l.Params.ToolCall.RawInput)
					}
					opt := "proceed_once"
					if l.Params.ToolCall.Kind == "execute" {
						if l.Params.ToolCall.Title != "git push --force" && cli == "gemini" {
							t.Errorf("the shell request's title is %q, want the command", l.Params.ToolCall.Title)
						}
						opt = "cancel"
					}
					send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, l.ID, opt))
				case l.Method == "" && string(l.ID) == "3":
					result = string(l.Result)
					send("")
				case l.Method == "session/update" && l.Params.Update.SessionUpdate == "agent_message_chunk":
					var c struct{ Text string }
					_ = json.Unmarshal(l.Params.Update.Content, &c)
					if strings.HasPrefix(c.Text, "Done.") && (!strings.Contains(c.Text, "Did not run `git push --force`") || !strings.Contains(c.Text, "Edited a.txt.")) {
						t.Errorf("summary %q", c.Text)
					}
				}
			})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if strings.Join(asked, ",") != "execute,edit" {
				t.Errorf("asked for %v", asked)
			}
			if !strings.Contains(result, `"stopReason":"end_turn"`) || (cli == "gemini") != strings.Contains(result, `"input_tokens"`) {
				t.Errorf("prompt result %s", result)
			}
			if b, err := os.ReadFile("a.txt"); err != nil || !strings.Contains(string(b), "with the owner's permission") {
				t.Errorf("a.txt %q, %v", b, err)
			}
		})
	}
}

// TestACPCancel: session/cancel while a permission request waits ends the
// turn with stopReason "cancelled", and nothing runs.
func TestACPCancel(t *testing.T) {
	var result string
	code, stderr := playACPInProcess(t, "gemini", func(l acpLine, raw string, send func(string)) {
		switch {
		case l.Method == "" && string(l.ID) == "1":
			send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd() + `","mcpServers":[]}}`)
		case l.Method == "" && string(l.ID) == "2":
			var r struct{ SessionID string }
			_ = json.Unmarshal(l.Result, &r)
			send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + r.SessionID + `","prompt":[{"type":"text","text":"[ask-edit:a.txt]"}]}}`)
			send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + r.SessionID + `"}}`)
		case l.Method == "" && string(l.ID) == "3":
			result = string(l.Result)
			send("")
		}
	})
	if code != 0 || result != `{"stopReason":"cancelled"}` {
		t.Fatalf("exit %d, result %s\n%s", code, result, stderr)
	}
	if _, err := os.Stat("a.txt"); err == nil {
		t.Error("a.txt was written although the turn was cancelled")
	}
}

// TestACPAgents: Copilot CLI, OpenCode and the generic pi-agent over ACP.
// Each tells the image and link parts its prompt had; pi-agent
// --no-images refuses an image part; OpenCode asks before an edit only
// where its configuration says "ask", and edits without asking otherwise.
func TestACPAgents(t *testing.T) {
	const png = "iVBORw0KGgo=" // the PNG signature, 8 bytes
	for _, tc := range []struct {
		name   string
		inv    invocation
		config string // OPENCODE_CONFIG_CONTENT
		asks   bool
		refuse bool // the image part is refused
	}{
		{"copilot", invocation{cli: "copilot", acp: true}, "", true, false},
		{"opencode default", invocation{cli: "opencode", acp: true}, "", false, false},
		{"opencode ask", invocation{cli: "opencode", acp: true}, `{"permission":{"edit":"ask"}}`, true, false},
		{"pi-agent", invocation{cli: piAgent, acp: true}, "", true, false},
		{"pi-agent no images", invocation{cli: piAgent, acp: true, noImages: true}, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENCODE_CONFIG_CONTENT", tc.config)
			var asked int
			var summary, result, failure string
			code, stderr := playACPAs(t, tc.inv, func(l acpLine, raw string, send func(string)) {
				switch {
				case l.Method == "" && string(l.ID) == "1":
					var r struct {
						AgentCapabilities struct {
							PromptCapabilities struct{ Image bool }
						}
					}
					_ = json.Unmarshal(l.Result, &r)
					if r.AgentCapabilities.PromptCapabilities.Image == tc.refuse {
						t.Errorf("initialize declares image %v: %s", r.AgentCapabilities.PromptCapabilities.Image, l.Result)
					}
					send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd() + `","mcpServers":[]}}`)
				case l.Method == "" && string(l.ID) == "2":
					var r struct{ SessionID string }
					_ = json.Unmarshal(l.Result, &r)
					send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + r.SessionID + `","prompt":[` +
						`{"type":"text","text":"fix the page [ask-edit:a.txt]"},{"type":"image","mimeType":"image/png","data":"` + png + `"},` +
						`{"type":"resource_link","uri":"file:///w/.fetch/in/log.txt","name":"log.txt"}]}}`)
				case l.Method == "session/request_permission":
					asked++
					send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}`, l.ID))
				case l.Method == "session/update" && l.Params.Update.SessionUpdate == "agent_message_chunk":
					var c struct{ Text string }
					_ = json.Unmarshal(l.Params.Update.Content, &c)
					if strings.HasPrefix(c.Text, "Done.") {
						summary = c.Text
					}
				case l.Method == "" && string(l.ID) == "3":
					result, failure = string(l.Result), string(l.Error)
					send("")
				}
			})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if tc.refuse {
				if !strings.Contains(failure, "declared no image prompts") {
					t.Fatalf("an image part to an agent without image prompts: result %s, error %s", result, failure)
				}
				return
			}
			if (asked == 1) != tc.asks {
				t.Errorf("asked %d times, want asks=%v", asked, tc.asks)
			}
			for _, want := range []string{"Got an image part (image/png, 8 bytes).", "Got a link to file:///w/.fetch/in/log.txt.", "Edited a.txt."} {
				if !strings.Contains(summary, want) {
					t.Errorf("summary %q does not say %q", summary, want)
				}
			}
			if b, err := os.ReadFile("a.txt"); err != nil || len(b) == 0 {
				t.Errorf("a.txt %q, %v", b, err)
			}
		})
	}
}

// TestPiAgentFlags: pi-agent takes --no-images and nothing else.
func TestPiAgentFlags(t *testing.T) {
	if inv, err := parsePiAgent([]string{"--no-images"}, io.Discard); err != nil || !inv.acp || !inv.noImages {
		t.Errorf("--no-images: %+v, %v", inv, err)
	}
	if _, err := parsePiAgent([]string{"hello"}, io.Discard); err == nil {
		t.Error("a positional argument was taken")
	}
}
