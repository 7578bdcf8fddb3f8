package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// TestParseACP: a generic ACP harness's name is its argv, checked word by
// word; a bad name says what is wrong and is an unknown harness.
func TestParseACP(t *testing.T) {
	for name, argv := range map[Name][]string{
		"acp:goose acp":                   {"goose", "acp"},
		"acp:kimi --acp":                  {"kimi", "--acp"},
		"acp:/opt/pi/bin/pi-agent":        {"/opt/pi/bin/pi-agent"},
		"acp:droid exec --output=acp,x@1": {"droid", "exec", "--output=acp,x@1"},
	} {
		a, err := ParseACP(name)
		if err != nil || !slices.Equal(a.argv, argv) || a.Name() != name {
			t.Errorf("%q: %q, %v; want %q", name, a.argv, err, argv)
		}
	}
	for name, why := range map[Name]string{
		"acp:":                                  "no command",
		"acp:-rf /":                             "may not start with '-'",
		"acp:goose  acp":                        "one space",
		"acp: goose":                            "one space",
		"acp:goose acp ":                        "one space",
		"acp:goose;rm -rf /":                    "the command",
		"acp:goose $(id)":                       "the argument",
		"acp:goose 'acp'":                       "the argument",
		"acp:goose\tacp":                        "the command",
		"acp:goose a|b":                         "the argument",
		"acp:" + Name(strings.Repeat("x", 300)): "longer than",
		"acp:a " + Name(strings.Repeat("b ", 16)) + "c": "more than 16 words",
	} {
		_, err := ParseACP(name)
		if !errors.Is(err, ErrUnknownHarness) || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an unknown harness saying %q", name, err, why)
		}
	}
	r := NewRegistry()
	if a, err := r.Get("acp:goose acp"); err != nil || a.Name() != "acp:goose acp" {
		t.Errorf("Get: %v, %v", a, err)
	}
	if _, err := r.Get("acp:goose;x"); !errors.Is(err, ErrUnknownHarness) {
		t.Errorf("Get of a bad name: %v", err)
	}
	for _, n := range r.Names() {
		if IsACPName(n) {
			t.Errorf("Names lists %q", n)
		}
	}
}

// TestACPGenericInvocation: two-way only, its argv as named, no
// credentials, no model, no plan or read-only mode.
func TestACPGenericInvocation(t *testing.T) {
	a, _ := ParseACP("acp:goose acp")
	task := Task{ID: "t1", Goal: "g", Workspace: "/w"}
	creds := Credentials{"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": "sk-x", "GEMINI_API_KEY": "g"}
	if tr := a.Traits(); !tr.TwoWay || !tr.TwoWayOnly || tr.ReadOnly {
		t.Errorf("traits %+v", tr)
	}
	if _, err := a.Invocation(task, creds); !errors.Is(err, ErrNoOneShot) {
		t.Errorf("one-shot invocation: %v", err)
	}
	inv, err := a.TwoWayInvocation(task, ModeWork, creds)
	if err != nil || !slices.Equal(inv.Argv, []string{"goose", "acp"}) || !slices.Equal(inv.Env, commonEnv) {
		t.Errorf("invocation %+v, %v", inv, err)
	}
	if len(a.Keys()) != 0 || len(KeptKeys(a)) != 0 || len(HostsOf(a.Name())) != 0 {
		t.Errorf("keys %v, kept %v, hosts %v", a.Keys(), KeptKeys(a), HostsOf(a.Name()))
	}
	task.Model = "gpt-5"
	if _, err := a.TwoWayInvocation(task, ModeWork, nil); !errors.Is(err, ErrInvalidTask) || !strings.Contains(err.Error(), "own configuration") {
		t.Errorf("a model: %v", err)
	}
	task.Model = ""
	if _, err := a.TwoWayInvocation(task, ModePlan, nil); !errors.Is(err, ErrNoPlanMode) {
		t.Errorf("plan: %v", err)
	}
	if tokenCLI(a.Name()) != "acp" || tokenCLI(Gemini) != "gemini" {
		t.Errorf("token names %q, %q", tokenCLI(a.Name()), tokenCLI(Gemini))
	}
}

// TestCopilotOpenCodeTwoWayInvocation: copilot --acp --stdio with the
// model in COPILOT_MODEL and no --allow-all-tools; opencode acp with the
// model and "ask" permissions in its configuration, the owner's "deny"
// kept and its other settings too.
func TestCopilotOpenCodeTwoWayInvocation(t *testing.T) {
	task := Task{ID: "t1", Goal: "g", Workspace: "/w", Model: "gpt-5.5"}
	inv, err := CopilotAdapter{}.TwoWayInvocation(task, ModeWork, Credentials{"COPILOT_GITHUB_TOKEN": "gho_x", "COPILOT_MODEL": "old", "GITHUB_TOKEN": "ghp_pr"})
	if err != nil || !slices.Equal(inv.Argv, []string{"copilot", "--acp", "--stdio"}) {
		t.Fatalf("copilot %q, %v", inv.Argv, err)
	}
	if !slices.Contains(inv.Env, "COPILOT_MODEL=gpt-5.5") || slices.Contains(inv.Env, "COPILOT_MODEL=old") ||
		!slices.Contains(inv.Env, "COPILOT_GITHUB_TOKEN=gho_x") || slices.ContainsFunc(inv.Env, func(e string) bool { return strings.HasPrefix(e, "GITHUB_TOKEN=") }) {
		t.Errorf("copilot env %q", inv.Env)
	}
	if tr := (CopilotAdapter{}).Traits(); !tr.TwoWay || !tr.ReadOnly {
		t.Errorf("copilot traits %+v", tr)
	}

	task.Model = "anthropic/claude-sonnet-4-5"
	owner := `{"theme":"x","permission":{"bash":"deny","edit":"allow","read":"allow"}}`
	inv, err = OpenCodeAdapter{}.TwoWayInvocation(task, ModeWork, Credentials{"OPENCODE_CONFIG_CONTENT": owner, "ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": "sk-x"})
	if err != nil || !slices.Equal(inv.Argv, []string{"opencode", "acp"}) {
		t.Fatalf("opencode %q, %v", inv.Argv, err)
	}
	var cfg map[string]any
	for _, e := range inv.Env {
		if v, ok := strings.CutPrefix(e, "OPENCODE_CONFIG_CONTENT="); ok {
			if cfg != nil || json.Unmarshal([]byte(v), &cfg) != nil {
				t.Fatalf("env %q", inv.Env)
			}
		}
		if strings.HasPrefix(e, "OPENAI_API_KEY=") {
			t.Errorf("another provider's key: %q", e)
		}
	}
	want := map[string]any{"theme": "x", "model": task.Model, "permission": map[string]any{"bash": "deny", "edit": "ask", "read": "allow", "webfetch": "ask"}}
	if b, _ := json.Marshal(cfg); string(b) != string(must(json.Marshal(want))) {
		t.Errorf("config %s, want %s", b, must(json.Marshal(want)))
	}
	if _, err := (OpenCodeAdapter{}).TwoWayInvocation(task, ModeWork, Credentials{"OPENCODE_CONFIG_CONTENT": "[1]"}); !errors.Is(err, ErrInvalidTask) {
		t.Errorf("a configuration that is not an object: %v", err)
	}
}

// TestACPImageParts: the opening prompt carries each picture as an image
// part when initialize declared image prompts, and as a resource_link
// otherwise; other files are links; the text always names every file and
// never holds its data.
func TestACPImageParts(t *testing.T) {
	atts := []Attachment{
		{Name: "bug.png", MediaType: "image/png", Path: "/w/.fetch/in/bug.png", Data: []byte("\x89PNG\r\n\x1a\n")},
		{Name: "log.txt", MediaType: "text/plain", Path: "/w/.fetch/in/log.txt", Data: []byte("boom")},
		{Name: "big.jpg", MediaType: "image/jpeg", Path: "/w/.fetch/in/big.jpg"}, // no data: a link
	}
	task := Task{ID: "t1", Goal: "fix it", Workspace: "/w", Attachments: atts}
	for _, images := range []bool{true, false} {
		d := newACPDialogue(task)
		init := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"image":` + map[bool]string{true: "true", false: "false"}[images] + `}}}}`
		d.React([]byte(init))
		got := d.React([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}`))
		if len(got) != 1 {
			t.Fatalf("images %v: %q", images, got)
		}
		var m struct {
			Params struct{ Prompt []acpBlock }
		}
		if err := json.Unmarshal(got[0], &m); err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, b := range m.Params.Prompt {
			types = append(types, b.Type)
		}
		want := []string{"text", "image", "resource_link", "resource_link"}
		if !images {
			want = []string{"text", "resource_link", "resource_link", "resource_link"}
		}
		if !slices.Equal(types, want) {
			t.Errorf("images %v: parts %q, want %q", images, types, want)
		}
		text := m.Params.Prompt[0].Text
		if text != Prompt(task) || !strings.Contains(text, AttachmentNote(atts)) || strings.Count(text, "The user attached") != 1 {
			t.Errorf("text %q", text)
		}
		if strings.Contains(string(got[0]), `"data":"boom"`) || strings.Contains(text, "iVBOR") || strings.Contains(string(got[0]), "Ym9vbQ") {
			t.Errorf("a file's data is in the prompt: %s", got[0])
		}
		if images && (m.Params.Prompt[1].MimeType != "image/png" || string(m.Params.Prompt[1].Data) != "\x89PNG\r\n\x1a\n" || !strings.Contains(string(got[0]), `"data":"iVBORw0KGgo="`)) {
			t.Errorf("image part %+v", m.Params.Prompt[1])
		}
		if l := m.Params.Prompt[len(m.Params.Prompt)-2]; l.URI != "file:///w/.fetch/in/log.txt" || l.Name != "log.txt" {
			t.Errorf("link %+v", l)
		}
	}
	// Without attachments the prompt is its text alone, as before.
	d := newACPDialogue(Task{ID: "t1", Goal: "g", Workspace: "/w"})
	d.React([]byte(`{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"promptCapabilities":{"image":true}}}}`))
	if got := d.React([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}`)); len(got) != 1 || strings.Count(string(got[0]), `"type"`) != 1 {
		t.Errorf("plain prompt %q", got)
	}
}

// hangingRunner starts a run that prints nothing until its context ends.
type hangingRunner struct{}

func (hangingRunner) Exec(ctx context.Context, spec kennel.ExecSpec, _ kennel.LineHandler) (kennel.Result, error) {
	if spec.Started != nil {
		spec.Started()
	}
	<-ctx.Done()
	return kennel.Result{ExitCode: 130, Stopped: true}, context.Cause(ctx)
}

// TestACPGenericHandshakeBound: a generic agent that does not answer
// initialize in time is stopped, and the run fails naming the command;
// the bound is the generic harness's alone.
func TestACPGenericHandshakeBound(t *testing.T) {
	a, _ := ParseACP("acp:goose acp")
	a.handshake = 50 * time.Millisecond
	attach := func(spec *kennel.ExecSpec) (Input, error) {
		pr, pw := io.Pipe()
		go func() { _, _ = io.Copy(io.Discard, pr) }() // ends when the input closes
		spec.Stdin = pr
		return pipeCloser{pw}, nil
	}
	task := Task{ID: "t1", Goal: "g", Workspace: "/w", Measured: true}
	o, err := RunTwoWay(t.Context(), hangingRunner{}, a, task, ModeWork, nil, attach, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "acp:goose acp: goose did not answer initialize in 50ms"; o.Success || o.Error != want || o.Stopped {
		t.Errorf("outcome %+v, want the error %q", o, want)
	}
	// The caller's own cancellation is still a stop, not a handshake.
	ctx, cancel := context.WithCancel(t.Context())
	a.handshake = time.Hour
	time.AfterFunc(20*time.Millisecond, cancel)
	o, err = RunTwoWay(ctx, hangingRunner{}, a, task, ModeWork, nil, attach, nil)
	if err == nil || !o.Stopped || strings.Contains(o.Error, "initialize") {
		t.Errorf("cancelled: %+v, %v", o, err)
	}
	if _, ok := Adapter(GeminiAdapter{}).(handshaker); ok {
		t.Error("Gemini CLI's runs are bounded too")
	}
}

// pipeCloser is an Input over a pipe.
type pipeCloser struct{ w *io.PipeWriter }

func (p pipeCloser) Send(_ context.Context, msg []byte) error { _, err := p.w.Write(msg); return err }
func (p pipeCloser) Close(context.Context) error              { return p.w.Close() }
