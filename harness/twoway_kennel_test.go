package harness_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/kennel"
)

// pipeInput is a two-way run's stdin through a plain pipe
// (kennel.ExecSpec.Stdin), standing in for the kennel's inbox.
type pipeInput struct {
	mu   sync.Mutex
	w    *io.PipeWriter
	sent [][]byte
}

func (p *pipeInput) Send(_ context.Context, msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, msg)
	_, err := p.w.Write(msg)
	return err
}

func (p *pipeInput) Close(context.Context) error { return p.w.Close() }

// twoWayRun is one two-way run driven by a test: decide answers each
// request (nil: no reply).
type twoWayRun struct {
	goal, resume string
	mode         harness.TwoWayMode
	decide       func(a harness.TwoWay, ev harness.Event) []byte
}

// runSeq numbers the runs, for their task ids.
var runSeq int

// driveTwoWay runs r in the kennel and answers the requests from the
// test's goroutine, as the task engine does from its own.
func driveTwoWay(t *testing.T, k *kennel.Kennel, ws string, r twoWayRun) (harness.Outcome, []harness.Event) {
	t.Helper()
	a := harness.ClaudeAdapter{}
	runSeq++
	task := harness.Task{ID: fmt.Sprintf("twoway-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), runSeq), Goal: r.goal, Workspace: ws, ResumeID: r.resume, Timeout: time.Minute}
	o, evs, _ := driveRun(t, 2*time.Minute, testRunner{k}, a, task, r.mode, harness.Credentials{}, func(ev harness.Event) []byte { return r.decide(a, ev) })
	return o, evs
}

// driveRun runs task on adapter through RunTwoWay with runner, its stdin
// a pipe, and answers each request with decide (nil: no reply) from the
// test's goroutine. It returns the outcome, the events and the messages
// written to the CLI's stdin.
func driveRun(t *testing.T, limit time.Duration, runner harness.Runner, adapter harness.Adapter, task harness.Task, mode harness.TwoWayMode, creds harness.Credentials, decide func(ev harness.Event) []byte) (harness.Outcome, []harness.Event, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	events := make(chan harness.Event, 4096) // onEvent must not block
	var in *pipeInput
	attach := func(spec *kennel.ExecSpec) (harness.Input, error) {
		pr, pw := io.Pipe()
		spec.Stdin = pr
		in = &pipeInput{w: pw}
		return in, nil
	}
	type result struct {
		o   harness.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := harness.RunTwoWay(ctx, runner, adapter, task, mode, creds, attach, func(ev harness.Event) { events <- ev })
		close(events)
		done <- result{o, err}
	}()
	var evs []harness.Event
	for ev := range events {
		evs = append(evs, ev)
		if ev.Request == nil || ev.Kind == harness.KindRequestCancelled {
			continue
		}
		if msg := decide(ev); msg != nil {
			if err := in.Send(ctx, msg); err != nil {
				t.Errorf("send reply to %s: %v", ev.Kind, err)
			}
		}
	}
	res := <-done
	if res.err != nil {
		t.Fatalf("RunTwoWay: %v", res.err)
	}
	var sent []string
	if in != nil {
		for _, m := range in.sent {
			sent = append(sent, string(m))
		}
	}
	return res.o, evs, sent
}

// testRunner hides everything of the kennel but Exec.
type testRunner struct{ k *kennel.Kennel }

func (r testRunner) Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	return r.k.Exec(ctx, spec, fn)
}

func must(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func kinds(evs []harness.Event, k harness.Kind) []harness.Event {
	var out []harness.Event
	for _, ev := range evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// TestTwoWayClaudeInKennel drives the scripted Claude Code in the real
// kennel image through a pipe on its stdin: one process asks for a
// command (denied with the owner's reason), a question (answered), an edit
// (allowed) and an unknown request (denied), and goes on after each.
func TestTwoWayClaudeInKennel(t *testing.T) {
	k := newTestKennel(t)
	ws := kennelRepo(t, k)

	t.Run("work", func(t *testing.T) {
		goal := "Ship it [ask-permission:Bash:git push --force] [ask-question:Which format?:JSON|YAML] [ask-unknown] [ask-edit:edited.txt] [file:answers.txt]"
		o, evs := driveTwoWay(t, k, ws, twoWayRun{goal: goal, mode: harness.ModeWork, decide: func(a harness.TwoWay, ev harness.Event) []byte {
			r := *ev.Request
			switch {
			case ev.Kind == harness.KindPermission && r.Command == "git push --force":
				return must(t)(a.Deny(r, "Use a pull request."))
			case ev.Kind == harness.KindAsk:
				return must(t)(a.Answer(r, []string{"YAML"}))
			case ev.Kind == harness.KindPermission && r.Path != "":
				return must(t)(a.Allow(r))
			case ev.Kind == harness.KindBadRequest && r.ID != "":
				return must(t)(a.Deny(r, "Fetch does not serve this request."))
			}
			t.Errorf("unexpected request %s %+v", ev.Kind, r)
			return must(t)(a.Deny(r, "unexpected"))
		}})
		if !o.Success {
			t.Fatalf("outcome %+v", o)
		}
		for _, want := range []string{"Did not run `git push --force`: Use a pull request.", `Recorded your answer "YAML" in answers.txt.`, "error reply (Fetch does not serve this request.)", "Edited edited.txt."} {
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
		if bad := kinds(evs, harness.KindBadRequest); len(bad) != 1 || !strings.Contains(bad[0].Text, "fetch_unknown_subtype") {
			t.Errorf("bad requests %+v", bad)
		}
		// The same process got the answer: one run, and the file it wrote
		// names the answer.
		b, err := os.ReadFile(filepath.Join(ws, "answers.txt"))
		if err != nil || !strings.HasPrefix(string(b), "answer: YAML (fakecli pid ") {
			t.Errorf("answers.txt %q, %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "edited.txt")); err != nil || !strings.Contains(string(b), "permission") {
			t.Errorf("edited.txt %q, %v", b, err)
		}
		// A denied command never ran.
		for _, ev := range kinds(evs, harness.KindCommand) {
			if ev.Command == "git push --force" && ev.ExitCode != nil {
				t.Errorf("the denied command is reported as run: %+v", ev)
			}
		}
	})

	t.Run("repeat", func(t *testing.T) {
		goal := "Clean [ask-permission-repeat:Bash:rm -rf build:3]"
		o, evs := driveTwoWay(t, k, ws, twoWayRun{goal: goal, mode: harness.ModeWork, decide: func(a harness.TwoWay, ev harness.Event) []byte {
			return must(t)(a.Deny(*ev.Request, "No."))
		}})
		perms := kinds(evs, harness.KindPermission)
		if len(perms) != 3 || !o.Success {
			t.Fatalf("%d permission requests, outcome %+v", len(perms), o)
		}
		for _, p := range perms[1:] {
			if p.Request.Fingerprint != perms[0].Request.Fingerprint || p.Request.ID == perms[0].Request.ID {
				t.Errorf("repeated request %+v, first %+v", p.Request, perms[0].Request)
			}
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		o, _ := driveTwoWay(t, k, ws, twoWayRun{goal: "[ask-permission:Bash:make deploy]", mode: harness.ModeWork, decide: func(a harness.TwoWay, ev harness.Event) []byte {
			return must(t)(a.Interrupt("fetch_interrupt_1"))
		}})
		if o.Success || o.Error != "the run was interrupted" {
			t.Fatalf("outcome %+v", o)
		}
	})

	t.Run("plan", func(t *testing.T) {
		var plans []string
		o, _ := driveTwoWay(t, k, ws, twoWayRun{goal: "Tidy up [plan] [file:PLAN_DONE.md]", mode: harness.ModePlan, decide: func(a harness.TwoWay, ev harness.Event) []byte {
			if ev.Kind != harness.KindPlan {
				t.Errorf("request %s in plan mode", ev.Kind)
				return must(t)(a.Deny(*ev.Request, "no"))
			}
			plans = append(plans, ev.Request.Plan)
			if len(plans) == 1 {
				return must(t)(a.Deny(*ev.Request, "Also update the README."))
			}
			return must(t)(a.DenyAndStop(*ev.Request, "Approved; it runs next."))
		}})
		if len(plans) != 2 || !strings.Contains(plans[1], "As you asked: Also update the README.") {
			t.Fatalf("plans %q", plans)
		}
		if _, err := os.Stat(filepath.Join(ws, "PLAN_DONE.md")); err == nil {
			t.Fatal("the planning run wrote the file")
		}
		// Approve: the same session carries out the plan.
		o2, _ := driveTwoWay(t, k, ws, twoWayRun{goal: harness.ApprovedPlanGoal("Tidy up", plans[1]), resume: o.SessionID, mode: harness.ModeWork,
			decide: func(a harness.TwoWay, ev harness.Event) []byte { return must(t)(a.Allow(*ev.Request)) }})
		if !o2.Success || o2.SessionID != o.SessionID {
			t.Fatalf("approved run %+v (planning session %s)", o2, o.SessionID)
		}
		if _, err := os.Stat(filepath.Join(ws, "PLAN_DONE.md")); err != nil {
			t.Fatalf("the approved plan was not carried out: %v", err)
		}
	})
}
