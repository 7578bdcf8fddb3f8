package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// appLine is a line the fake app-server writes, as far as these tests read it.
type appLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Item struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Status string `json:"status"`
		} `json:"item"`
		Turn struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"turn"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// playAppServerInProcess runs the fake as `codex app-server` over pipes,
// sends first, and lets reply answer each of its lines.
func playAppServerInProcess(t *testing.T, first []string, reply func(l appLine, send func(string))) (int, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		c := playAppServer(nil, inR, outW, &stderr)
		outW.Close()
		code <- c
	}()
	lines := make(chan string, 16)
	written := make(chan struct{})
	go func() { // the client's writer, so the test never waits on the fake
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
	for _, s := range first {
		send(s)
	}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		var l appLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		if strings.Contains(sc.Text(), `"jsonrpc"`) {
			t.Errorf("the fake wrote a jsonrpc field: %s", sc.Text())
		}
		reply(l, send)
	}
	send("")
	<-written
	return <-code, stderr.String()
}

// TestAppServerPolicies: requests before initialize are refused and lines
// with "jsonrpc" skipped; under approval policy "never" nothing asks and
// questions are unavailable without the feature; under "untrusted" a
// command asks, and turn/interrupt ends the turn "interrupted" with nothing
// run.
func TestAppServerPolicies(t *testing.T) {
	start := func(policy, config string) string {
		return `{"id":2,"method":"thread/start","params":{"cwd":"` + cwd() + `","approvalPolicy":"` + policy + `","sandbox":"danger-full-access","config":` + config + `}}`
	}
	t.Run("never", func(t *testing.T) {
		var notInit bool
		var methods []string
		var final, status string
		code, stderr := playAppServerInProcess(t, []string{
			`{"id":9,"method":"thread/start","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
			`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`,
		}, func(l appLine, send func(string)) {
			switch {
			case string(l.ID) == "9" && l.Error != nil:
				notInit = l.Error.Message == "Not initialized"
			case l.Method == "" && string(l.ID) == "1":
				send(`{"method":"initialized"}`)
				send(start("never", `{}`))
			case l.Method == "" && string(l.ID) == "2":
				var r struct{ Thread struct{ ID string } }
				_ = json.Unmarshal(l.Result, &r)
				send(`{"id":3,"method":"turn/start","params":{"threadId":"` + r.Thread.ID + `","input":[{"type":"text","text":"go [ask-permission:Bash:make] [ask-question:Which?:A|B] [ask-edit:a.txt]"}]}}`)
			case l.Method == "item/completed" && l.Params.Item.Type == "agentMessage":
				final = l.Params.Item.Text
			case l.Method == "turn/completed":
				status = l.Params.Turn.Status
				send("")
			case l.Method != "" && len(l.ID) > 0:
				methods = append(methods, l.Method)
			}
		})
		if code != 0 || !notInit || status != "completed" || len(methods) != 0 {
			t.Fatalf("exit %d, not initialized %v, status %q, requests %v\n%s", code, notInit, status, methods, stderr)
		}
		if !strings.Contains(stderr, "failed to deserialize") {
			t.Errorf("the jsonrpc line was not refused:\n%s", stderr)
		}
		for _, want := range []string{"Ran `make`.", "request_user_input is unavailable in Default mode.", "Edited a.txt."} {
			if !strings.Contains(final, want) {
				t.Errorf("final message %q lacks %q", final, want)
			}
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		var thread, turn, status string
		var asked []string
		code, stderr := playAppServerInProcess(t, []string{`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`}, func(l appLine, send func(string)) {
			switch {
			case l.Method == "" && string(l.ID) == "1":
				send(`{"method":"initialized"}`)
				send(start("untrusted", `{"features.default_mode_request_user_input":true}`))
			case l.Method == "" && string(l.ID) == "2":
				var r struct{ Thread struct{ ID string } }
				_ = json.Unmarshal(l.Result, &r)
				thread = r.Thread.ID
				send(`{"id":3,"method":"turn/start","params":{"threadId":"` + thread + `","input":[{"type":"text","text":"[ask-permission:Bash:make deploy] [ask-edit:a.txt]"}]}}`)
			case l.Method == "turn/started":
				turn = l.Params.Turn.ID
			case l.Method == "item/commandExecution/requestApproval":
				asked = append(asked, l.Method)
				send(`{"id":4,"method":"turn/interrupt","params":{"threadId":"` + thread + `","turnId":"` + turn + `"}}`)
			case l.Method == "turn/completed":
				status = l.Params.Turn.Status
				send("")
			case l.Method == "" && string(l.ID) == "4" && string(l.Result) != "{}":
				t.Errorf("turn/interrupt answered %s", l.Result)
			}
		})
		if code != 0 || status != "interrupted" || len(asked) != 1 {
			t.Fatalf("exit %d, status %q, asked %v\n%s", code, status, asked, stderr)
		}
		if _, err := os.Stat("a.txt"); err == nil {
			t.Error("a.txt was written although the turn was interrupted")
		}
	})
}
