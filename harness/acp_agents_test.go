package harness_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// pngBytes is a picture as an attachment carries it (the PNG signature).
var pngBytes = []byte("\x89PNG\r\n\x1a\n")

// genericBin is a directory of fake CLIs that also holds the scripted
// fake as pi-agent, a program Fetch has no code for.
func genericBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range append(testkit.FakeCLINames(), "pi-agent") {
		if err := os.Symlink(testkit.FakeCLI(t), dir+"/"+name); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// driveACPLocal runs adapter two-way on the host with the scripted fake,
// allows every request, and returns the outcome, the events and the
// messages Fetch wrote to the CLI's stdin.
func driveACPLocal(t *testing.T, adapter harness.Adapter, task harness.Task) (harness.Outcome, []harness.Event, []string) {
	t.Helper()
	tw := adapter.(harness.TwoWay)
	runner := localRunner{bin: genericBin(t), home: t.TempDir()}
	return driveRun(t, time.Minute, runner, adapter, task, harness.ModeWork, harness.Credentials{"ANTHROPIC_API_KEY": "sk-ant-test"}, func(ev harness.Event) []byte {
		if ev.Kind != harness.KindPermission {
			return nil
		}
		return must(t)(tw.Allow(*ev.Request))
	})
}

// TestACPAgentsLocal: Copilot CLI (copilot --acp), OpenCode (opencode acp)
// and a generic ACP agent Fetch has no code for (acp:pi-agent) run
// two-way: each asks before its edit (OpenCode because the run's
// configuration says "ask"), gets the owner's picture as an ACP image
// part, and the edit lands in the work tree.
func TestACPAgentsLocal(t *testing.T) {
	generic, err := harness.NewRegistry().Get("acp:pi-agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []harness.Adapter{harness.CopilotAdapter{}, harness.OpenCodeAdapter{}, generic} {
		t.Run(strings.ReplaceAll(string(a.Name()), ":", "-"), func(t *testing.T) {
			dir := newRepo(t)
			shot := harness.Attachment{Name: "bug.png", MediaType: "image/png", Path: dir + "/" + harness.AttachDir + "/bug.png", Data: pngBytes}
			task := harness.Task{ID: "acp-" + strings.ReplaceAll(string(a.Name()), ":", "-"), Goal: "fix the page [ask-edit:NOTES.md]", Workspace: dir,
				Attachments: []harness.Attachment{shot}, Timeout: time.Minute}
			o, evs, sent := driveACPLocal(t, a, task)
			if !o.Success {
				t.Fatalf("outcome %+v", o)
			}
			if n := len(kinds(evs, harness.KindPermission)); n != 1 {
				t.Errorf("%d permission requests, want 1 (the edit)", n)
			}
			if !strings.Contains(o.Summary, "Got an image part (image/png, 8 bytes).") || !strings.Contains(o.Summary, "Edited NOTES.md.") {
				t.Errorf("summary %q", o.Summary)
			}
			if b, err := os.ReadFile(dir + "/NOTES.md"); err != nil || !strings.Contains(string(b), "with the owner's permission") {
				t.Errorf("NOTES.md %q, %v", b, err)
			}
			prompt := promptOf(t, sent)
			if !strings.Contains(prompt, shot.Path) {
				t.Errorf("the prompt's text does not name the attachment's path: %q", prompt)
			}
		})
	}
}

// promptOf is the text of the first session/prompt among sent, failing
// when base64 of a picture is in it.
func promptOf(t *testing.T, sent []string) string {
	t.Helper()
	for _, s := range sent {
		var m struct {
			Method string
			Params struct {
				Prompt []struct{ Type, Text string }
			}
		}
		if json.Unmarshal([]byte(s), &m) != nil || m.Method != "session/prompt" {
			continue
		}
		var text []string
		for _, b := range m.Params.Prompt {
			text = append(text, b.Text)
		}
		joined := strings.Join(text, "\n")
		if strings.Contains(joined, "iVBORw0KGgo") {
			t.Errorf("base64 image data in the prompt's text: %q", joined)
		}
		return joined
	}
	t.Fatalf("no session/prompt among %q", sent)
	return ""
}

// TestACPGenericWithoutImages: an agent whose initialize declares no
// image prompts gets the picture as a resource_link to its file, and the
// prompt names the file.
func TestACPGenericWithoutImages(t *testing.T) {
	a, err := harness.NewRegistry().Get("acp:pi-agent --no-images")
	if err != nil {
		t.Fatal(err)
	}
	dir := newRepo(t)
	shot := harness.Attachment{Name: "bug.png", MediaType: "image/png", Path: dir + "/" + harness.AttachDir + "/bug.png", Data: pngBytes}
	o, _, sent := driveACPLocal(t, a, harness.Task{ID: "acp-noimg", Goal: "look [ask-edit:NOTES.md]", Workspace: dir, Attachments: []harness.Attachment{shot}, Timeout: time.Minute})
	if !o.Success {
		t.Fatalf("outcome %+v", o)
	}
	if strings.Contains(o.Summary, "Got an image part") || !strings.Contains(o.Summary, "Got a link to file://"+shot.Path+".") {
		t.Errorf("summary %q: want a link to the file and no image part", o.Summary)
	}
	if p := promptOf(t, sent); !strings.Contains(p, shot.Path) {
		t.Errorf("the prompt does not name %s: %q", shot.Path, p)
	}
}

// TestACPGenericNotInKennel: a generic agent whose command the kennel does
// not have fails, and the failure names the harness and the command.
func TestACPGenericNotInKennel(t *testing.T) {
	a, err := harness.NewRegistry().Get("acp:goose acp")
	if err != nil {
		t.Fatal(err)
	}
	runner := stubRunner{res: kennel.Result{ExitCode: 127, StderrTail: []byte("fetch-shim: start goose: exec: \"goose\": executable file not found in $PATH\n")}}
	o, err := harness.RunTwoWay(t.Context(), runner, a, harness.Task{ID: "t1", Goal: "g", Workspace: "/w", Measured: true}, harness.ModeWork, nil, pipeAttach, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "acp:goose acp: goose is not in the kennel"; o.Success || !strings.HasPrefix(o.Error, want) {
		t.Errorf("outcome error %q, want it to start %q", o.Error, want)
	}
	// Read back from the kennel (the run ended before Fetch wrote to it),
	// after a Prepare, whose lookup says it in its own words.
	f := stubFollower{kennel.Result{ExitCode: 127, StderrTail: []byte("fetch-shim: prepare: exec: \"goose\": executable file not found in $PATH\n")}}
	o, err = harness.Follow(t.Context(), f, a, harness.Task{ID: "t1", Goal: "g", Workspace: "/w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "acp:goose acp: goose is not in the kennel"; o.Success || !strings.HasPrefix(o.Error, want) {
		t.Errorf("followed outcome error %q, want it to start %q", o.Error, want)
	}
}

// stubFollower reads back a run that printed nothing and ended with res.
type stubFollower struct{ res kennel.Result }

func (f stubFollower) Follow(context.Context, string, string, kennel.LineHandler) (kennel.Result, error) {
	return f.res, nil
}

// stubRunner is a runner whose run printed nothing and ended with res.
type stubRunner struct{ res kennel.Result }

func (r stubRunner) Exec(_ context.Context, spec kennel.ExecSpec, _ kennel.LineHandler) (kennel.Result, error) {
	if spec.Started != nil {
		spec.Started()
	}
	return r.res, nil
}

// pipeAttach attaches a pipe nobody reads to a run's stdin.
func pipeAttach(spec *kennel.ExecSpec) (harness.Input, error) {
	pr, pw := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, pr) }() // ends when the input is closed
	spec.Stdin = pr
	return &pipeInput{w: pw}, nil
}

// TestACPMessageIsATurnOfItsOwn: a message put while an ACP agent's turn
// runs waits for the turn's end and is then a session/prompt of its own
// to the same process, which the scripted agent records in its edit; the
// run ends after that turn's result.
func TestACPMessageIsATurnOfItsOwn(t *testing.T) {
	a := harness.GeminiAdapter{}
	tw := a.Traits()
	if tw.Steer != harness.SteerTurn {
		t.Fatalf("gemini's steering = %q; want a turn of its own", tw.Steer)
	}
	dir := newRepo(t)
	mail := harness.NewMailbox()
	task := harness.Task{ID: "acp-message", Goal: "add a health endpoint [scenario:slow:1] [file:health.go]", Workspace: dir, Timeout: time.Minute, Mailbox: mail}
	runner := localRunner{bin: genericBin(t), home: t.TempDir()}
	put := false
	o, _, sent := driveRun(t, time.Minute, runner, a, task, harness.ModeWork, harness.Credentials{"GEMINI_API_KEY": "test"}, func(ev harness.Event) []byte {
		if ev.Kind != harness.KindPermission {
			return nil
		}
		if !put { // the first turn's edit: the turn still runs
			put = true
			if err := mail.Put("also log the errors"); err != nil {
				t.Errorf("put a message while the turn runs: %v", err)
			}
		}
		return must(t)(a.Allow(*ev.Request))
	})
	if !o.Success {
		t.Fatalf("outcome %+v", o)
	}
	prompts := 0
	for _, s := range sent {
		if strings.Contains(s, `"session/prompt"`) {
			prompts++
		}
	}
	if prompts != 2 {
		t.Errorf("%d session/prompt sent; want 2 (the goal, then the message): %q", prompts, sent)
	}
	b, err := os.ReadFile(dir + "/health.go")
	if err != nil || !strings.Contains(string(b), "(turn 2)\nmessage: also log the errors") {
		t.Errorf("health.go = %q, %v; want the message's own turn", b, err)
	}
	if len(o.Undelivered) != 0 {
		t.Errorf("undelivered: %q", o.Undelivered)
	}
}
