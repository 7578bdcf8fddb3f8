package agent_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/modes"
)

func TestDangerousTaskGoalNeedsApproval(t *testing.T) {
	for goal, dangerous := range map[string]bool{
		"discard the task branch fetch/t-1":     true,
		"force-push main to origin":             true,
		"git reset --hard to last week":         true,
		"add a retry to the HTTP client":        false,
		"remove the unused helper in parser.go": false,
	} {
		t.Run(goal, func(t *testing.T) {
			r := newRig(t, nil)
			r.selectWorkspace("demo")
			r.llm.Script(testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"` + goal + `"}`}))
			if !dangerous {
				r.llm.Script(testkit.Say("started"))
			}
			r.say(intent.Action, goal)
			if got := len(r.tasks.created) == 0; got != dangerous {
				t.Fatalf("held for approval = %v; want %v", got, dangerous)
			}
			_, err := r.db.OpenPrompt(t.Context(), conv)
			if (err == nil) != dangerous {
				t.Fatalf("approval prompt open = %v; want %v", err == nil, dangerous)
			}
		})
	}
}

func TestSupervisedApprovesEveryTask(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.db.SetAutonomy(t.Context(), conv, string(instincts.Supervised))
	r.llm.Script(testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"add a README"}`}))
	replies := r.say(intent.Action, "add a README")
	if len(r.tasks.created) != 0 || r.mode.Current() != modes.Guarding || !strings.Contains(texts(replies), "supervised") {
		t.Fatalf("supervised task: created %d, mode %s, reply %q", len(r.tasks.created), r.mode.Current(), texts(replies))
	}
	p, _ := r.db.OpenPrompt(t.Context(), conv)
	if !strings.Contains(p.Body, `task_create {"goal":"add a README","workspace":"demo"}`) {
		t.Fatalf("the approval does not show the full action with its workspace: %q", p.Body)
	}
	// The selection changing before the yes does not move the task.
	r.selectWorkspace("")
	r.db.ResolvePrompt(t.Context(), p.ID, "yes")
	r.mode.Approve(t.Context(), "owner approved")
	r.llm.Script(testkit.Say("The README task is running."))
	more, err := r.agent.Resolved(t.Context(), p, "yes", r.mode)
	if err != nil || len(r.tasks.created) != 1 || r.tasks.created[0].Workspace != "demo" || !strings.Contains(texts(more), r.tasks.created[0].ID) {
		t.Fatalf("after yes: %q, %v, %d tasks", texts(more), err, len(r.tasks.created))
	}
}

func TestPromptsOfOthersGoToTheNextResolver(t *testing.T) {
	next := &recordResolver{}
	r := newRig(t, func(_ *rig, c *agent.Config) { c.Next = next })
	p := store.Prompt{ID: 9, ConversationID: conv, Kind: store.Question, Body: "Which port?", Action: `{"task":"t-1"}`}
	if _, err := r.agent.Resolved(t.Context(), p, "8080", r.mode); err != nil {
		t.Fatal(err)
	}
	if next.answer != "8080" || next.prompt.ID != 9 {
		t.Fatalf("next resolver got %+v %q", next.prompt, next.answer)
	}
	if len(r.llm.Requests()) != 0 {
		t.Fatal("the agent answered a prompt that was not its own")
	}
}

func TestAnotherPromptOpenIsAResult(t *testing.T) {
	r := newRig(t, nil)
	if _, err := r.db.AddPrompt(t.Context(), store.Prompt{ConversationID: conv, Kind: store.Question, Body: "harness asks"}); err != nil {
		t.Fatal(err)
	}
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}),
		testkit.Say("I'll wait for your other answer first."),
	)
	r.say(intent.Action, "delete demo")
	if res := r.toolResults(1)["d"]; !strings.Contains(res, "still open") || !r.hasWorkspace("demo") {
		t.Fatalf("result %q", res)
	}
}

var _ agent.Resolver = (*recordResolver)(nil)

func TestDeletingAMissingWorkspaceAsksNobody(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"ghost"}`}),
		testkit.Say("There is no ghost workspace."),
	)
	r.say(intent.Action, "delete ghost")
	if res := r.toolResults(1)["d"]; !strings.Contains(res, `no workspace "ghost"`) {
		t.Fatalf("result %q", res)
	}
	if _, err := r.db.OpenPrompt(t.Context(), conv); err == nil || r.mode.Current() != modes.Alert {
		t.Fatalf("an approval was opened for a missing workspace (mode %s)", r.mode.Current())
	}
}
