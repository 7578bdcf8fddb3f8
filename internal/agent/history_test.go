package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/testkit"
)

func TestHistoryWindowKeepsWholeTurnsInOrder(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.HistoryTurns = 1 })
	for i := 1; i <= 3; i++ {
		r.llm.Script(
			testkit.Use(
				testkit.Call{ID: fmt.Sprintf("l%d", i), Name: "workspace_list", Arguments: "{}"},
				testkit.Call{ID: fmt.Sprintf("s%d", i), Name: "workspace_status", Arguments: `{"name":"demo"}`},
			),
			testkit.Say(fmt.Sprintf("Answer %d.", i)),
		)
		r.say(intent.Action, fmt.Sprintf("Request number %d about demo", i))
	}
	reqs := r.llm.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	// Turn 3's first request: system, turn 2 whole (user, assistant with
	// two calls, two results, answer), then the new user message.
	msgs := reqs[4].Body.Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool,assistant,user" {
		t.Fatalf("roles = %s", got)
	}
	if msgs[1].Content.Text != "Request number 2 about demo" {
		t.Fatalf("window starts with %q; want turn 2", msgs[1].Content.Text)
	}
	// Turn 1 lives on in the summary, and turn 2 was folded in with it
	// into the summary of the next turn.
	sys := reqs[4].System()
	if !strings.Contains(sys, "Request number 1 about demo") || !strings.Contains(sys, "Answer 1.") {
		t.Fatalf("summary lacks turn 1:\n%s", sys)
	}
	r.llm.Script(testkit.Say("Answer 4."))
	r.say(intent.Conversation, "thanks")
	sys = r.llm.Requests()[6].System()
	if !strings.Contains(sys, "Request number 1") || !strings.Contains(sys, "Request number 2") || strings.Contains(sys, "Request number 3") {
		t.Fatalf("summary after turn 4 should hold turns 1 and 2 only:\n%s", sys)
	}
}

func TestClearStartsFreshHistoryKeepsWorkspace(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.llm.Script(testkit.Say("first"), testkit.Say("second"))
	r.say(intent.Conversation, "remember the word pineapple")
	// /clear: the conversation takes every message out of the history.
	if _, _, err := r.db.AddInbound(t.Context(), storeInbound("/clear")); err != nil {
		t.Fatal(err)
	}
	if err := r.db.ClearHistory(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
	r.say(intent.Conversation, "what was the word?")
	req := r.llm.Requests()[1]
	if strings.Contains(req.Raw, "pineapple") {
		t.Fatal("history survived /clear")
	}
	if len(req.Body.Messages) != 2 || !strings.Contains(req.System(), "Workspace: demo") {
		t.Fatalf("after /clear: %d messages, system:\n%s", len(req.Body.Messages), req.System())
	}
}

func TestHistoryWindowBoundedBySize(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.HistoryTokens = 130 })
	for i := 1; i <= 3; i++ {
		r.llm.Script(testkit.Say(fmt.Sprintf("Answer %d: %s", i, strings.Repeat("word ", 50))))
		r.say(intent.Conversation, fmt.Sprintf("Question %d", i))
	}
	msgs := r.llm.Requests()[2].Body.Messages
	// 2 turns of about 60 tokens fit in 130; the third would not.
	if len(msgs) != 1+4+1 || msgs[1].Content.Text != "Question 1" {
		t.Fatalf("%d messages, first %q", len(msgs), msgs[1].Content.Text)
	}
	r.llm.Script(testkit.Say("ok"))
	r.say(intent.Conversation, "Question 4")
	req := r.llm.Requests()[3]
	if len(req.Body.Messages) != 1+4+1 || !strings.Contains(req.System(), "Question 1") {
		t.Fatalf("%d messages; summary:\n%s", len(req.Body.Messages), req.System())
	}
}

func TestSummaryKeepsWhatToolsDid(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.HistoryTurns = 1 })
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "t", Name: "task_create", Arguments: `{"goal":"add a health check"}`}),
		testkit.Say("Started."),
		testkit.Say("You're welcome."),
		testkit.Say("It is t-101."),
	)
	r.say(intent.Action, "add a health check")
	r.say(intent.Conversation, "thanks")
	r.say(intent.Inquiry, "what was the task id?")
	if sys := r.llm.Requests()[3].System(); !strings.Contains(sys, "Created task t-101") {
		t.Fatalf("summary lost the task id:\n%s", sys)
	}
}
