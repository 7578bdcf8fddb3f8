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

// acpGolden is what testdata/acp/<fixture>.golden.json holds: the events
// of the fixture's lines, and the replies Fetch writes to each request.
type acpGolden struct {
	Events  []Event    `json:"events"`
	Replies []acpReply `json:"replies"`
}

type acpReply struct {
	ID          string `json:"id"`
	Allow       string `json:"allow,omitempty"`
	AllowErr    string `json:"allow_error,omitempty"`
	Deny        string `json:"deny"`
	DenyAndStop string `json:"deny_and_stop,omitempty"`
}

// TestACPFixtures parses the CLIs' ACP lines of testdata/acp (their shapes
// and sources: testdata/acp/README.md) and writes the replies to their
// requests; refresh with -update.
func TestACPFixtures(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		adapter interface {
			Adapter
			TwoWay
		}
	}{{"gemini", GeminiAdapter{}}, {"qwen", QwenAdapter{}}} {
		t.Run(tc.fixture, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "acp", tc.fixture+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			g := acpGolden{Events: []Event{}, Replies: []acpReply{}}
			p := tc.adapter.NewParser(Task{ID: "t1", Goal: "g", Workspace: "/work/app"})
			emit := func(ev Event) { g.Events = append(g.Events, ev) }
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				p.Parse(sc.Bytes(), emit)
			}
			p.Flush(emit)
			for _, ev := range g.Events {
				r := ev.Request
				if r == nil || r.ID == "" {
					continue
				}
				rep := acpReply{ID: r.ID}
				if ev.Kind == KindPermission {
					if r.Action == "" {
						t.Errorf("request %s has no action", r.ID)
					}
					b, err := tc.adapter.Allow(*r)
					rep.Allow = string(b)
					if err != nil {
						rep.AllowErr = err.Error()
					}
					b, err = tc.adapter.DenyAndStop(*r, "no")
					if err != nil {
						t.Fatal(err)
					}
					rep.DenyAndStop = string(b)
				}
				// Deny never fails for a request with an id.
				b, err := tc.adapter.Deny(*r, "because")
				if err != nil {
					t.Fatalf("deny %s: %v", r.ID, err)
				}
				rep.Deny = string(b)
				g.Replies = append(g.Replies, rep)
			}
			got, _ := json.MarshalIndent(g, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", "acp", tc.fixture+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./harness -run TestACPFixtures -update)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s differs (-golden +got):\n%s", path, d)
			}
		})
	}
}

// TestACPDialogue: the opening is initialize; initialize's response brings
// session/new with the task's directory, and session/new's the prompt with
// its session id, byte for byte; cancel names that session.
func TestACPDialogue(t *testing.T) {
	task := Task{ID: "t1", Goal: "tidy <up>", Workspace: "/work/app", Workdir: "/work/app/.fetch/t1"}
	a := GeminiAdapter{}
	opening, err := a.Opening(task, ModeWork)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientCapabilities":{},"protocolVersion":1}}` + "\n"
	if len(opening) != 1 || string(opening[0]) != want {
		t.Errorf("opening %q, want %q", opening, want)
	}
	d, err := a.NewDialogue(task, ModeWork)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Interrupt(); !errors.Is(err, ErrCannotReply) {
		t.Errorf("interrupt before the session: %v", err)
	}
	for _, line := range []string{`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}`, `not json`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`} {
		if got := d.React([]byte(line)); len(got) != 0 {
			t.Errorf("React(%s) = %q, want nothing", line, got)
		}
	}
	got := d.React([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[]}}`))
	want = `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/work/app/.fetch/t1","mcpServers":[]}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("after initialize: %q, want %q", got, want)
	}
	got = d.React([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s-1","modes":{}}}`))
	var prompt bytes.Buffer
	enc := json.NewEncoder(&prompt)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(Prompt(task))
	want = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":` + string(bytes.TrimSpace(prompt.Bytes())) + `}]}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("after session/new: %q, want %q", got, want)
	}
	if !bytes.Contains(got[0], []byte("tidy <up>")) {
		t.Errorf("the prompt's HTML is escaped: %s", got[0])
	}
	c, err := d.Interrupt()
	if want := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}` + "\n"; err != nil || string(c) != want {
		t.Errorf("interrupt %q, %v; want %q", c, err, want)
	}

	// Resuming loads the session instead and prompts it once loaded.
	task.ResumeID = "s-0"
	task.Answer = "yes"
	d, _ = a.NewDialogue(task, ModeWork)
	got = d.React([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
	want = `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s-0","cwd":"/work/app/.fetch/t1","mcpServers":[]}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("resume: %q, want %q", got, want)
	}
	got = d.React([]byte(`{"jsonrpc":"2.0","id":2,"result":null}`))
	want = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-0","prompt":[{"type":"text","text":"yes"}]}}` + "\n"
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("after session/load: %q, want %q", got, want)
	}
}

// TestACPNoPlanMode: neither CLI plans over ACP.
func TestACPNoPlanMode(t *testing.T) {
	task := Task{ID: "t1", Goal: "g", Workspace: "/work/app"}
	for _, a := range []TwoWay{GeminiAdapter{}, QwenAdapter{}} {
		if _, err := a.TwoWayInvocation(task, ModePlan, nil); !errors.Is(err, ErrNoPlanMode) {
			t.Errorf("%T plan invocation: %v", a, err)
		}
		inv, err := a.TwoWayInvocation(task, ModeWork, Credentials{"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "g"})
		if err != nil || len(inv.Argv) < 2 || inv.Argv[1] != "--acp" {
			t.Errorf("%T work invocation %q, %v", a, inv.Argv, err)
		}
		for _, arg := range inv.Argv {
			if arg == "--yolo" {
				t.Errorf("%T two-way runs with --yolo", a)
			}
		}
	}
}
