package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
)

// dialogueCodex is the Codex adapter, handing out the dialogue of its run
// so that a test can interrupt it as the task engine would.
type dialogueCodex struct {
	harness.CodexAdapter
	dialogue chan harness.Dialogue
}

func (c dialogueCodex) NewDialogue(task harness.Task, mode harness.TwoWayMode) (harness.Dialogue, error) {
	d, err := c.CodexAdapter.NewDialogue(task, mode)
	if err == nil {
		c.dialogue <- d
	}
	return d, err
}

// driveCodexLocal runs the scripted `codex app-server` on the host through
// RunTwoWay and answers each request with decide (given the run's
// dialogue), from the test's goroutine.
func driveCodexLocal(t *testing.T, dir, goal, resume string, decide func(d harness.Dialogue, ev harness.Event) []byte) (harness.Outcome, []harness.Event, []string) {
	t.Helper()
	runner, _ := localSetup(t)
	return driveCodexWith(t, runner, dir, goal, resume, decide)
}

func driveCodexWith(t *testing.T, runner localRunner, dir, goal, resume string, decide func(d harness.Dialogue, ev harness.Event) []byte) (harness.Outcome, []harness.Event, []string) {
	t.Helper()
	a := dialogueCodex{dialogue: make(chan harness.Dialogue, 1)}
	runSeq++
	task := harness.Task{ID: fmt.Sprintf("codex-%d", runSeq), Goal: goal, Answer: "go on", Workspace: dir, ResumeID: resume, Timeout: time.Minute}
	var d harness.Dialogue // the run's, once it started
	return driveRun(t, time.Minute, runner, a, task, harness.ModeWork, harness.Credentials{"OPENAI_API_KEY": "sk-test"}, func(ev harness.Event) []byte {
		if d == nil {
			d = <-a.dialogue
		}
		return decide(d, ev)
	})
}

// TestCodexAppServerLocal drives the scripted `codex app-server` through
// RunTwoWay: one process asks to run a command (declined), asks a question
// (answered), sends a request Fetch does not serve (refused), asks to edit
// a file (accepted) and finishes; the thread resumes in a second run; a
// denial that stops the turn, and the dialogue's turn/interrupt, end a run
// as interrupted.
func TestCodexAppServerLocal(t *testing.T) {
	a := harness.CodexAdapter{}
	t.Run("work", func(t *testing.T) {
		dir := newRepo(t)
		goal := "Ship it [ask-permission:Bash:git push --force] [ask-question:Which format?:JSON|YAML] [ask-unknown] [ask-edit:edited.txt] [file:answers.txt]"
		o, evs, sent := driveCodexLocal(t, dir, goal, "", func(_ harness.Dialogue, ev harness.Event) []byte {
			r := *ev.Request
			switch {
			case ev.Kind == harness.KindPermission && r.Command == "git push --force":
				if !r.NoReason || r.Action != harness.ActionShell {
					t.Errorf("command request %+v", r)
				}
				return must(t)(a.Deny(r, "Use a pull request."))
			case ev.Kind == harness.KindAsk:
				return must(t)(a.Answer(r, []string{"YAML"}))
			case ev.Kind == harness.KindPermission && r.Path == filepath.Join(dir, "edited.txt"):
				if r.Action != harness.ActionEdit || !strings.Contains(r.Diff, "+fake codex edited this") {
					t.Errorf("edit request %+v", r)
				}
				return must(t)(a.Allow(r))
			case ev.Kind == harness.KindBadRequest && r.ID != "":
				return must(t)(a.Deny(r, "Fetch does not serve this request."))
			}
			t.Errorf("unexpected request %s %+v", ev.Kind, r)
			return must(t)(a.Deny(r, "unexpected"))
		})
		if !o.Success || o.SessionID == "" {
			t.Fatalf("outcome %+v", o)
		}
		for _, want := range []string{"Did not run `git push --force`: the user declined.", `Recorded your answer "YAML" in answers.txt.`, "got error -32601 (Method not found)", "Edited edited.txt."} {
			if !strings.Contains(o.Summary, want) {
				t.Errorf("summary %q lacks %q", o.Summary, want)
			}
		}
		if n := len(kinds(evs, harness.KindPermission)); n != 2 {
			t.Errorf("%d permission requests, want 2", n)
		}
		ask := kinds(evs, harness.KindAsk)
		if len(ask) != 1 || ask[0].Request.Questions[0].Question != "Which format?" || len(ask[0].Request.Questions[0].Options) != 2 {
			t.Errorf("ask events %+v", ask)
		}
		if bad := kinds(evs, harness.KindBadRequest); len(bad) != 1 || !strings.Contains(bad[0].Text, "mcpServer/elicitation/request") {
			t.Errorf("bad requests %+v", bad)
		}
		b, err := os.ReadFile(filepath.Join(dir, "answers.txt"))
		if err != nil || !strings.HasPrefix(string(b), "answer: YAML (fakecli pid ") {
			t.Errorf("answers.txt %q, %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "edited.txt")); err != nil || !strings.Contains(string(b), "permission") {
			t.Errorf("edited.txt %q, %v", b, err)
		}
		for _, ev := range kinds(evs, harness.KindCommand) {
			if strings.Contains(ev.Command, "git push") && ev.ExitCode != nil {
				t.Errorf("the declined command is reported as run: %+v", ev)
			}
		}
		if u := o.Usage; u.InputTokens == 0 || u.OutputTokens == 0 {
			t.Errorf("usage %+v", u)
		}
		// The thread ran as Fetch asked: untrusted approvals, full access,
		// questions on; the prompt names Codex's question tool.
		if len(sent) < 4 || !strings.Contains(sent[2], `"approvalPolicy":"untrusted","sandbox":"danger-full-access","config":{"features.default_mode_request_user_input":true}`) ||
			!strings.Contains(sent[3], "request_user_input") {
			t.Errorf("sent %q", sent)
		}

	})

	t.Run("deny and stop", func(t *testing.T) {
		o, _, _ := driveCodexLocal(t, newRepo(t), "Deploy [ask-permission:Bash:make deploy] [ask-edit:after.txt]", "", func(_ harness.Dialogue, ev harness.Event) []byte {
			if ev.Kind != harness.KindPermission {
				t.Errorf("unexpected request %s", ev.Kind)
			}
			return must(t)(a.DenyAndStop(*ev.Request, "Stop."))
		})
		if o.Success || !strings.Contains(o.Summary+o.Error, "interrupted") {
			t.Fatalf("outcome %+v", o)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		dir := newRepo(t)
		o, evs, sent := driveCodexLocal(t, dir, "Deploy [ask-permission:Bash:make deploy] [ask-edit:after.txt]", "", func(d harness.Dialogue, ev harness.Event) []byte {
			return must(t)(d.Interrupt())
		})
		if o.Success || !strings.Contains(o.Summary+o.Error, "interrupted") {
			t.Fatalf("outcome %+v", o)
		}
		if n := len(kinds(evs, harness.KindPermission)); n != 1 {
			t.Errorf("%d requests after the interrupt, want 1", n)
		}
		if last := sent[len(sent)-1]; !strings.Contains(last, `"method":"turn/interrupt"`) || !strings.Contains(last, `"turnId":"turn_`) {
			t.Errorf("last line sent %q", last)
		}
		if _, err := os.Stat(filepath.Join(dir, "after.txt")); err == nil {
			t.Error("the interrupted turn went on to edit")
		}
	})
}

// TestCodexAppServerResume: a second run resumes the thread the first one
// started (its session id), in the same HOME, and the answer is its prompt.
func TestCodexAppServerResume(t *testing.T) {
	a := harness.CodexAdapter{}
	runner, _ := localSetup(t)
	dir := newRepo(t)
	allow := func(_ harness.Dialogue, ev harness.Event) []byte { return must(t)(a.Allow(*ev.Request)) }
	o, _, _ := driveCodexWith(t, runner, dir, "Note it [file:notes.txt]", "", allow)
	if !o.Success || o.SessionID == "" {
		t.Fatalf("first run %+v", o)
	}
	o2, evs, sent := driveCodexWith(t, runner, dir, "Note it [file:notes.txt]", o.SessionID, allow)
	if !o2.Success || o2.SessionID != o.SessionID {
		t.Fatalf("resumed run %+v, first %s", o2, o.SessionID)
	}
	if len(sent) < 4 || !strings.Contains(sent[2], `"method":"thread/resume","params":{"threadId":"`+o.SessionID+`"`) || !strings.Contains(sent[3], `"text":"go on"`) {
		t.Errorf("sent %q", sent)
	}
	// The resumed turn edits the thread's file again.
	if perms := kinds(evs, harness.KindPermission); len(perms) != 1 || filepath.Base(perms[0].Request.Path) != "notes.txt" {
		t.Errorf("requests %+v", perms)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || strings.Count(string(b), "fake codex edited this") != 2 {
		t.Errorf("notes.txt %q, %v", b, err)
	}
}
