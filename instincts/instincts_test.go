package instincts_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/instincts"
)

var now = time.Date(2026, 11, 22, 14, 30, 0, 0, time.UTC)

func idle() instincts.State {
	return instincts.State{
		Now: now, Channel: "term", UserID: "owner-1", Role: "owner",
		Mode: "ALERT", ModeEmoji: "🟢", ModeSince: now.Add(-5 * time.Minute),
	}
}

func working() instincts.State {
	st := idle()
	st.Mode, st.ModeEmoji = "WORKING", "🔵"
	st.Workspace = "api"
	st.Task = &instincts.Task{ID: "t-7", Goal: "add a health check", Harness: "claude", Workspace: "api", StartedAt: now.Add(-(4*time.Minute + 12*time.Second))}
	return st
}

func TestInstincts(t *testing.T) {
	set := instincts.New()
	withApproval := idle()
	withApproval.Prompt = &instincts.Prompt{Kind: instincts.Approval, Body: "workspace_delete {\"name\":\"demo\"}"}
	withQuestion := working()
	withQuestion.Prompt = &instincts.Prompt{Kind: instincts.Question, Body: "Use Postgres?"}
	busy := idle()
	busy.Busy = true

	for _, tc := range []struct {
		name     string
		text     string
		st       instincts.State
		instinct string
		effect   instincts.Effect
		reply    string // exact when it has no newline, else a substring
	}{
		{"status idle", "/status", idle(), "status", instincts.None, "🟢 ALERT since 2026-11-22 14:25 UTC (5m00s ago)\nWorkspace: none selected (/use WORKSPACE selects one)\nTask: none running\nAutonomy: cautious\nWaiting for your approval or answer: nothing\nLLM: none configured; commands work, requests in plain words need OPENROUTER_API_KEY"},
		{"status working", "/STATUS", working(), "status", instincts.None, "Task: t-7 on claude in api, running for 4m12s — add a health check"},
		{"status prompt", "/status", withQuestion, "status", instincts.None, "Waiting for your question: Use Postgres?"},
		{"stop idle", "/stop", idle(), "stop", instincts.Stop, "Nothing is running."},
		{"stop task", "/stop", working(), "stop", instincts.Stop, "Stopping task t-7."},
		{"stop busy turn", "stop", busy, "stop", instincts.Stop, "Stopped."},
		{"clear idle", "/clear", idle(), "clear", instincts.Clear, "History cleared (no workspace selected)."},
		{"clear refused", "/clear", working(), "clear", instincts.None, "Task t-7 is running; /stop it or wait for it to finish before clearing the history."},
		{"whoami", "/whoami", idle(), "whoami", instincts.None, "You are owner-1 (owner) on term."},
		{"commands", "/commands", idle(), "commands", instincts.None, "Commands: /help /status /stop /clear /whoami /autonomy /commands /approve /deny /remind /schedule /cron /watch /ship /checks /pr /use /allow /automerge /hosts /plan /policy /continue /retry /model /budget /withdraw /req"},
		{"help", "/help", idle(), "help", instincts.None, "/status — what runs, what waits for you, today's spend\n"},
		{"help one command", "/help status", idle(), "help", instincts.None, "/status — mode, workspace, running task, autonomy, what waits for you and the LLM budget left"},
		{"help one command with its slash", "/help /Remind", idle(), "help", instincts.None, "/remind — a one-time reminder: /remind in 20m check the deploy, /remind at 18:30 call Bob, /remind tomorrow 9am standup, /remind on friday at 17:00 report; or in plain words: remind me tomorrow at 9 to check the deploy"},
		{"help an unknown command", "/help frob", idle(), "help", instincts.None, `I don't know the command "/frob". Send /help to see what I understand.`},
		{"yes nothing", "yes", idle(), "yes", instincts.None, "Nothing is waiting for a yes or no right now."},
		{"no nothing", "no", idle(), "no", instincts.None, "Nothing is waiting for a yes or no right now."},
		{"approve", "approve", withApproval, "yes", instincts.Answer, "Approved."},
		{"slash approve", "/approve", withApproval, "yes", instincts.Answer, "Approved."},
		{"yes!", "Yes!", withApproval, "yes", instincts.Answer, "Approved."},
		{"deny", "deny", withApproval, "no", instincts.Answer, "Denied. Nothing was done."},
		{"no.", "No.", withApproval, "no", instincts.Answer, "Denied. Nothing was done."},
		{"/deny", "/deny", withApproval, "no", instincts.Answer, "Denied. Nothing was done."},
		{"yes to question", "yep", withQuestion, "yes", instincts.Answer, "Got it: yes."},
		{"unknown command", "/frobnicate now", idle(), "unknown", instincts.None, `I don't know the command "/frobnicate". Send /help to see what I understand.`},
		{"bare slash", "/", idle(), "unknown", instincts.None, `I don't know the command "/". Send /help to see what I understand.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := set.Match(tc.text, tc.st)
			if !ok {
				t.Fatalf("%q did not match", tc.text)
			}
			if r.Instinct != tc.instinct || r.Effect != tc.effect {
				t.Fatalf("%q → instinct %q effect %q; want %q %q", tc.text, r.Instinct, r.Effect, tc.instinct, tc.effect)
			}
			if strings.Contains(tc.reply, "\n") || tc.name == "status working" || tc.name == "status prompt" {
				if !strings.Contains(r.Reply, tc.reply) {
					t.Fatalf("reply %q does not contain %q", r.Reply, tc.reply)
				}
			} else if r.Reply != tc.reply {
				t.Fatalf("reply %q; want %q", r.Reply, tc.reply)
			}
			if tc.effect == instincts.Answer && r.Answer != tc.instinct {
				t.Fatalf("answer %q; want %q", r.Answer, tc.instinct)
			}
			again, _ := set.Match(tc.text, tc.st)
			if again != r {
				t.Fatalf("same state, different reply:\n%q\n%q", r.Reply, again.Reply)
			}
		})
	}
}

func TestStopForms(t *testing.T) {
	set := instincts.New()
	for _, s := range []string{
		"/stop", "stop", "Stop", "stop!", "STOP!!", "please stop", "Please stop.", "cancel", "abort the task",
		"stop it", "stop now", "cancel that", "abort", "halt", "kill it", "ok stop", "stop the task", "  stop  ",
	} {
		if !set.IsStop(s) {
			t.Errorf("%q is not a stop", s)
		}
		if r, ok := set.Match(s, working()); !ok || r.Effect != instincts.Stop {
			t.Errorf("%q → %+v, %v; want a stop", s, r, ok)
		}
	}
	for _, s := range []string{
		"stop using tabs in main.go", "cancel the subscription feature in billing.go", "add a stop button",
		"how do I stop the server?", "kill the process on port 3000", "stopwatch", "don't stop", "unstoppable",
	} {
		if set.IsStop(s) {
			t.Errorf("%q is taken for a stop", s)
		}
		if _, ok := set.Match(s, working()); ok {
			t.Errorf("%q matched an instinct", s)
		}
	}
}

func TestNotInstincts(t *testing.T) {
	set := instincts.New()
	for _, s := range []string{"", "   ", "hello", "yes, do it", "no idea what main.go does", "add /status endpoint", "approve the PR for me when tests pass"} {
		if r, ok := set.Match(s, idle()); ok {
			t.Errorf("%q matched %q", s, r.Instinct)
		}
	}
}

// TestHelpListsOnlyWorkingCommands checks that every command /help names
// is answered by an instinct of its own, not the unknown-command reply.
func TestHelpListsOnlyWorkingCommands(t *testing.T) {
	set := instincts.New()
	help, _ := set.Match("/help", idle())
	// One Discord message holds at most 2,000 characters.
	if n := utf8.RuneCountInString(help.Reply); n > 2000 {
		t.Errorf("/help is %d characters: Discord splits it", n)
	}
	cmds := regexp.MustCompile(`(?m)^(/\w+)`).FindAllStringSubmatch(help.Reply, -1)
	if len(cmds) < 6 {
		t.Fatalf("help lists %d commands:\n%s", len(cmds), help.Reply)
	}
	// The coding CLIs' requests are the conversation's (its steering),
	// which takes these before the instincts; the steering journeys
	// (journey/steer_test.go) show them working.
	conversations := []string{"/plan", "/policy", "/continue", "/retry", "/model", "/withdraw", "/req", "/budget"}
	for _, c := range cmds {
		r, ok := set.Match(c[1], idle())
		if slices.Contains(conversations, c[1]) {
			if ok {
				t.Errorf("%s is the conversation's, but an instinct took it: %+v", c[1], r)
			}
			continue
		}
		// An effect's reply is the runtime's (/use lists the workspaces).
		if !ok || r.Instinct == "unknown" || r.Reply == "" && r.Effect == instincts.None {
			t.Errorf("%s from /help → %+v", c[1], r)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	set := instincts.New()
	st := working()
	for b.Loop() {
		set.Match("/status", st)
		set.Match("add a health check to the API", st)
	}
}
