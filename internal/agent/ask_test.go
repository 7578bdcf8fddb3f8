package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestTaskAskAccess: task_ask (a read-only harness run) is offered to an
// inquiry only (an action hands the whole job to task_create); task_create
// stays action-only.
func TestTaskAskAccess(t *testing.T) {
	for _, tt := range []struct {
		kind              intent.Kind
		ask, createOffers bool
	}{
		{intent.Conversation, false, false},
		{intent.Inquiry, true, false},
		{intent.Action, false, true},
	} {
		t.Run(string(tt.kind), func(t *testing.T) {
			r := newRig(t, nil)
			r.llm.Script(testkit.Say("ok"))
			r.say(tt.kind, "how does the scheduler pick the next job?")
			offered := r.llm.Requests()[0].Tools()
			if got := slices.Contains(offered, "task_ask"); got != tt.ask {
				t.Errorf("task_ask offered = %v, want %v", got, tt.ask)
			}
			if got := slices.Contains(offered, "task_create"); got != tt.createOffers {
				t.Errorf("task_create offered = %v, want %v", got, tt.createOffers)
			}
		})
	}
}

// TestInquiryAsksAHarness: an inquiry hands a deep question to a harness
// in ask mode and tells the owner the answer is coming, with the id.
func TestInquiryAsksAHarness(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "q1", Name: "task_ask", Arguments: `{"question":"How does a request reach the database, end to end?","harness":"gemini"}`}),
		testkit.Say("I asked a harness to read the code; its answer will follow."),
	)
	replies := r.say(intent.Inquiry, "how does a request reach the database?")
	if len(r.tasks.created) != 1 {
		t.Fatalf("tasks created: %+v", r.tasks.created)
	}
	got := r.tasks.created[0]
	if got.Mode != task.Ask || got.Workspace != "demo" || got.Harness != "gemini" || !strings.Contains(got.Goal, "end to end") {
		t.Fatalf("task = %+v", got)
	}
	if res := r.toolResults(1)["q1"]; !strings.Contains(res, got.ID) || !strings.Contains(res, "read-only") {
		t.Fatalf("tool result %q", res)
	}
	if len(replies) != 1 || !strings.Contains(replies[0].Text, got.ID) {
		t.Fatalf("reply %q does not name task %s", texts(replies), got.ID)
	}
}

// TestConversationCannotAsk: a conversation calling task_ask anyway gets
// a tool error, and nothing starts.
func TestConversationCannotAsk(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "q1", Name: "task_ask", Arguments: `{"question":"what is this?"}`}),
		testkit.Say("Hi!"),
	)
	r.say(intent.Conversation, "hi")
	if res := r.toolResults(1)["q1"]; !strings.HasPrefix(res, "error:") || !strings.Contains(res, "not available") {
		t.Fatalf("tool result %q", res)
	}
	if len(r.tasks.created) != 0 {
		t.Fatalf("tasks created: %+v", r.tasks.created)
	}
}
