package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// sayAs is r.say from a sender of the given role.
func (r *rig) sayAs(role chat.Role, kind intent.Kind, text string) []chat.Reply {
	r.t.Helper()
	replies, err := r.agent.Respond(r.t.Context(), agent.Turn{
		ConversationID: conv, UserID: "friend", Role: role, Text: text,
		Intent: intent.Result{Kind: kind, Rule: "test"},
	})
	if err != nil {
		r.t.Fatalf("respond to %q: %v", text, err)
	}
	return replies
}

// TestAllowedUserCannotChangeTheOwnersWorkspaces: the owner's tools are
// neither offered to an allowed user's turn nor run when the model calls
// them anyway; the result tells the model why, and nothing changes.
func TestAllowedUserCannotChangeTheOwnersWorkspaces(t *testing.T) {
	for _, role := range []chat.Role{chat.Allowed, ""} {
		t.Run("role "+string(role), func(t *testing.T) {
			r := newRig(t, nil)
			r.createWorkspace("api")
			r.selectWorkspace("api")
			shipped := task.Task{ID: "t-9", ConversationID: conv, Workspace: "api", State: task.Succeeded}
			r.tasks.created = append(r.tasks.created, shipped)
			r.llm.Script(
				testkit.Use(
					testkit.Call{ID: "del", Name: "workspace_delete", Arguments: `{"name":"demo"}`},
					testkit.Call{ID: "new", Name: "workspace_create", Arguments: `{"name":"mine","url":"https://github.com/x/y.git"}`},
					testkit.Call{ID: "ship", Name: "task_ship", Arguments: `{"id":"t-9"}`},
				),
				testkit.Say("Only the owner can do that."),
			)
			r.sayAs(role, intent.Action, "delete demo, add mine and ship t-9")
			got := r.llm.Requests()[0].Tools()
			for _, name := range []string{"workspace_delete", "workspace_create", "task_ship"} {
				if slices.Contains(got, name) {
					t.Errorf("%s offered to a %q sender: %v", name, role, got)
				}
			}
			if !slices.Contains(got, "task_create") || !slices.Contains(got, "workspace_select") {
				t.Errorf("an allowed user lost the tools that are theirs too: %v", got)
			}
			res := r.toolResults(1)
			for _, id := range []string{"del", "new", "ship"} {
				if !strings.Contains(res[id], "not allowed: only the owner may") {
					t.Errorf("result of %s = %q; want a refusal", id, res[id])
				}
			}
			if !r.hasWorkspace("demo") || r.hasWorkspace("mine") {
				t.Fatalf("workspaces changed: demo there %v, mine there %v", r.hasWorkspace("demo"), r.hasWorkspace("mine"))
			}
			if r.promptOpen(store.Approval) {
				t.Fatal("an approval was asked for a refused tool")
			}
		})
	}
}

// TestOwnerKeepsTheOwnersTools: the same turn from the owner is offered
// them (workspace_delete still asks for approval).
func TestOwnerKeepsTheOwnersTools(t *testing.T) {
	r := newRig(t, nil)
	r.createWorkspace("api")
	r.selectWorkspace("api")
	r.llm.Script(testkit.Use(testkit.Call{ID: "del", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
	r.sayAs(chat.Owner, intent.Action, "delete demo")
	got := r.llm.Requests()[0].Tools()
	for _, name := range []string{"workspace_delete", "workspace_create"} {
		if !slices.Contains(got, name) {
			t.Errorf("%s not offered to the owner: %v", name, got)
		}
	}
	if !r.promptOpen(store.Approval) {
		t.Fatal("the owner's delete asked no approval")
	}
}

// TestApprovalAnsweredByAnAllowedUserRunsNothing: an approval of an
// owner's tool that someone else answers yes does not run it.
func TestApprovalAnsweredByAnAllowedUserRunsNothing(t *testing.T) {
	r := newRig(t, nil)
	r.createWorkspace("api")
	r.selectWorkspace("api")
	r.llm.Script(testkit.Use(testkit.Call{ID: "del", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
	r.sayAs(chat.Owner, intent.Action, "delete demo")
	p, err := r.db.OpenPrompt(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.db.ResolvePrompt(t.Context(), p.ID, "yes"); err != nil {
		t.Fatal(err)
	}
	more, err := r.agent.Resolved(t.Context(), p, "yes", chat.Allowed)
	if err != nil {
		t.Fatal(err)
	}
	if !r.hasWorkspace("demo") || !strings.Contains(texts(more), "Only the owner may delete a workspace") {
		t.Fatalf("after an allowed user's yes: demo there %v, replies %q", r.hasWorkspace("demo"), texts(more))
	}
}

// TestAllowedUserActsOnlyOnTheirTasks: an allowed user cancels or answers
// the tasks of their own conversation, not another's.
func TestAllowedUserActsOnlyOnTheirTasks(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.tasks.created = append(r.tasks.created,
		task.Task{ID: "t-owner", ConversationID: "discord:owner", Workspace: "demo", State: task.WaitingInput},
		task.Task{ID: "t-mine", ConversationID: conv, Workspace: "demo", State: task.WaitingInput},
	)
	r.llm.Script(
		testkit.Use(
			testkit.Call{ID: "c1", Name: "task_cancel", Arguments: `{"id":"t-owner"}`},
			testkit.Call{ID: "r1", Name: "task_respond", Arguments: `{"id":"t-owner","answer":"yes"}`},
			testkit.Call{ID: "c2", Name: "task_cancel", Arguments: `{"id":"t-mine"}`},
		),
		testkit.Say("done"),
	)
	r.sayAs(chat.Allowed, intent.Action, "cancel the tasks")
	res := r.toolResults(1)
	for _, id := range []string{"c1", "r1"} {
		if !strings.Contains(res[id], "not one of this conversation's") {
			t.Errorf("result of %s = %q; want a refusal", id, res[id])
		}
	}
	if !strings.Contains(res["c2"], "Cancelled task t-mine") {
		t.Errorf("cancelling their own task: %q", res["c2"])
	}
}
