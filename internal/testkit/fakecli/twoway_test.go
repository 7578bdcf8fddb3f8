package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: the two-way
// mode's stdin reader must end with stdin.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTwoWayInProcess plays the two-way mode over pipes with hand-written
// replies: the request lines have Claude Code's envelope, the answer reaches
// the same process, and it waits for stdin to close after its result.
func TestTwoWayInProcess(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		c := playTwoWay(invocation{cli: "claude", twoWay: true}, inR, outW, &stderr)
		outW.Close()
		code <- c
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"type":"control_request","request_id":"init_1","request":{"subtype":"initialize","hooks":null}}`)
	send(`{"type":"user","message":{"role":"user","content":"Go [ask-permission:Bash:git push --force] [ask-question:Which format?:JSON|YAML] [file:a.txt]"},"parent_tool_use_id":null,"session_id":""}`)
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	var sawResult bool
	var types []string
	for sc.Scan() {
		var l struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype   string          `json:"subtype"`
				ToolName  string          `json:"tool_name"`
				ToolUseID string          `json:"tool_use_id"`
				Input     json.RawMessage `json:"input"`
			} `json:"request"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		types = append(types, l.Type)
		switch {
		case l.Type == "control_request" && l.Request.ToolName == "Bash":
			if l.Request.Subtype != "can_use_tool" || l.Request.ToolUseID == "" || !strings.Contains(string(l.Request.Input), `"command":"git push --force"`) {
				t.Errorf("bash request %s", sc.Bytes())
			}
			send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"deny","message":"No force pushes."}}}`, l.RequestID))
		case l.Type == "control_request" && l.Request.ToolName == "AskUserQuestion":
			var in map[string]any
			_ = json.Unmarshal(l.Request.Input, &in)
			in["answers"] = map[string]string{"Which format?": "JSON"}
			b, _ := json.Marshal(in)
			send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow","updatedInput":%s}}}`, l.RequestID, b))
		case l.Type == "result":
			sawResult = true
			if !strings.Contains(sc.Text(), "Did not run `git push --force`: No force pushes.") {
				t.Errorf("result %s", sc.Bytes())
			}
			select {
			case c := <-code:
				t.Fatalf("exited (%d) before its stdin closed", c)
			default:
			}
			inW.Close()
		}
	}
	if c := <-code; c != 0 || !sawResult {
		t.Fatalf("exit %d, result %v, lines %v\n%s", c, sawResult, types, stderr.String())
	}
	if types[0] != "control_response" || types[1] != "system" {
		t.Errorf("first lines %v, want the initialize response, then init", types)
	}
	b, err := os.ReadFile("a.txt")
	if err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("answer: JSON (fakecli pid %d)", os.Getpid())) {
		t.Errorf("a.txt %q, %v", b, err)
	}
}
