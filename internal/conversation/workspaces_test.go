package conversation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/conversation"
)

// names is a workspace registry with fixed workspaces.
type names []string

func (n names) Names(context.Context) ([]string, error) { return n, nil }
func (names) Root() string                              { return "/srv/workspaces" }

func TestUseSelectsAWorkspace(t *testing.T) {
	e := newEnv(t, conversation.Config{Workspaces: names{"api", "demo"}})
	for i, tc := range []struct {
		text, reply, selected string
	}{
		{"/use", "Workspaces: api, demo. /use WORKSPACE selects one.", ""},
		{"/use nosuch", `There is no workspace "nosuch"; nothing changed. Workspaces: api, demo.`, ""},
		{"/use demo", "Workspace demo selected: new tasks and questions work there.", "demo"},
		{"/use", "Workspaces: api, demo (selected).", "demo"},
		{"/use ../x", `"../x" is not a workspace name`, "demo"},
	} {
		e.say(t, tc.text)
		got := e.rec.WaitFor(t, i+1)
		if reply := got[i].Reply.Text; !strings.Contains(reply, tc.reply) {
			t.Errorf("%s: reply %q; want %q", tc.text, reply, tc.reply)
		}
		e.idle(t)
		if c, _ := e.db.Conversation(t.Context(), conv); c.Workspace != tc.selected {
			t.Errorf("after %s: workspace %q; want %q", tc.text, c.Workspace, tc.selected)
		}
	}
	log, _ := e.db.AuditLog(t.Context(), conv)
	var selects int
	for _, a := range log {
		if a.Action == "workspace_select" && a.Detail == "demo" && a.Actor == owner {
			selects++
		}
	}
	if selects != 1 {
		t.Errorf("audit has %d workspace_select entries for demo; want 1: %+v", selects, log)
	}
}

func TestUseWithNoWorkspaces(t *testing.T) {
	e := newEnv(t, conversation.Config{Workspaces: names{}})
	e.say(t, "/use api")
	got := e.rec.WaitFor(t, 1)
	if !strings.Contains(got[0].Reply.Text, "There are no workspaces in /srv/workspaces yet") || !strings.Contains(got[0].Reply.Text, "fetch workspace add NAME [PATH]") {
		t.Fatalf("reply %q", got[0].Reply.Text)
	}
}

// TestVagueMessageWhileATaskRunsReachesTheAgent: "fix it" alone asks what
// is meant; while a task runs it goes to the agent as an action.
func TestVagueMessageWhileATaskRunsReachesTheAgent(t *testing.T) {
	idleAgent := &echo{}
	e := newEnv(t, conversation.Config{Agent: idleAgent})
	e.say(t, "fix it")
	if got := e.rec.WaitFor(t, 1); !strings.HasPrefix(got[0].Reply.Text, "I'm not sure what to do yet.") || len(idleAgent.turns) != 0 {
		t.Fatalf("fix it with nothing running: %q, %d agent turns", got[0].Reply.Text, len(idleAgent.turns))
	}

	agent := &echo{}
	e = newEnv(t, conversation.Config{Agent: agent, Tasks: running{}})
	e.say(t, "fix it")
	if got := e.rec.WaitFor(t, 1); got[0].Reply.Text != "done: fix it" {
		t.Fatalf("fix it with a task running: %q; want the agent's answer", got[0].Reply.Text)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.turns) != 1 || agent.turns[0].Intent != (intent.Result{Kind: intent.Action, Rule: intent.RuleRunningTask}) {
		t.Fatalf("agent turns = %+v; want one action about the running task", agent.turns)
	}
}
