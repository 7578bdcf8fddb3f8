package agent_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
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
	if len(r.tasks.created) != 0 || !r.promptOpen(store.Approval) || !strings.Contains(texts(replies), "supervised") {
		t.Fatalf("supervised task: created %d, approval open %v, reply %q", len(r.tasks.created), r.promptOpen(store.Approval), texts(replies))
	}
	p, _ := r.db.OpenPrompt(t.Context(), conv)
	if !strings.Contains(p.Body, `task_create {"goal":"add a README","workspace":"demo"}`) {
		t.Fatalf("the approval does not show the full action with its workspace: %q", p.Body)
	}
	// The selection changing before the yes does not move the task.
	r.selectWorkspace("")
	r.db.ResolvePrompt(t.Context(), p.ID, "yes")
	r.llm.Script(testkit.Say("The README task is running."))
	more, err := r.agent.Resolved(t.Context(), p, "yes", chat.Owner)
	if err != nil || len(r.tasks.created) != 1 || r.tasks.created[0].Workspace != "demo" || !strings.Contains(texts(more), r.tasks.created[0].ID) {
		t.Fatalf("after yes: %q, %v, %d tasks", texts(more), err, len(r.tasks.created))
	}
}

func TestPromptsOfOthersGoToTheNextResolver(t *testing.T) {
	next := &recordResolver{}
	r := newRig(t, func(_ *rig, c *agent.Config) { c.Next = next })
	p := store.Prompt{ID: 9, ConversationID: conv, Kind: store.Question, Body: "Which port?", Action: `{"task":"t-1"}`}
	if _, err := r.agent.Resolved(t.Context(), p, "8080", chat.Owner); err != nil {
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
	if _, err := r.db.OpenPrompt(t.Context(), conv); err == nil {
		t.Fatal("an approval was opened for a missing workspace")
	}
}

func TestTheActiveWorkspaceCannotBeDeleted(t *testing.T) {
	const refused = "workspace demo is the active workspace of this conversation; select another one first"
	t.Run("selected before the turn", func(t *testing.T) {
		r := newRig(t, nil)
		r.selectWorkspace("demo")
		r.llm.Script(
			testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}),
			testkit.Say("demo is in use; select another workspace first."),
		)
		replies := r.say(intent.Action, "delete demo")
		if res := r.toolResults(1)["d"]; !strings.Contains(res, "error: workspace_delete: "+refused) {
			t.Fatalf("result %q; want the refusal", res)
		}
		if _, err := r.db.OpenPrompt(t.Context(), conv); err == nil || len(replies[0].Actions) != 0 {
			t.Fatalf("an approval was asked for the active workspace (replies %+v)", replies)
		}
		if !r.hasWorkspace("demo") {
			t.Fatal("the active workspace was deleted")
		}
	})
	t.Run("selected earlier in the same turn", func(t *testing.T) {
		r := newRig(t, nil)
		r.createWorkspace("api")
		r.selectWorkspace("api")
		r.llm.Script(
			testkit.Use(
				testkit.Call{ID: "s", Name: "workspace_select", Arguments: `{"name":"demo"}`},
				testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`},
			),
			testkit.Say("demo is selected now, so I cannot delete it."),
		)
		r.say(intent.Action, "switch to demo and delete it")
		if res := r.toolResults(1)["d"]; !strings.Contains(res, refused) {
			t.Fatalf("result %q; want the refusal", res)
		}
		if _, err := r.db.OpenPrompt(t.Context(), conv); err == nil || !r.hasWorkspace("demo") {
			t.Fatal("an approval was asked for, or the workspace deleted")
		}
	})
	t.Run("selected while the approval was open", func(t *testing.T) {
		r := newRig(t, nil)
		r.llm.Script(testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
		r.say(intent.Action, "delete demo")
		p, err := r.db.OpenPrompt(t.Context(), conv)
		if err != nil {
			t.Fatalf("no approval asked: %v", err)
		}
		r.selectWorkspace("demo") // the owner selects it, then says yes
		if err := r.db.ResolvePrompt(t.Context(), p.ID, "yes"); err != nil {
			t.Fatal(err)
		}
		r.llm.Script(testkit.Say("demo is active, so I left it."))
		more, err := r.agent.Resolved(t.Context(), p, "yes", chat.Owner)
		if err != nil {
			t.Fatal(err)
		}
		if !r.hasWorkspace("demo") || !strings.Contains(texts(more), "workspace_delete failed: "+refused) {
			t.Fatalf("deleted=%v replies %q", !r.hasWorkspace("demo"), texts(more))
		}
	})
}
