package journey

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// J13: the workspace a conversation has selected cannot be deleted: the
// model's workspace_delete is refused before any approval is asked (no
// Approve button, no GUARDING), and the workspace stays. On the base
// commit the owner was asked to approve deleting the workspace in use.
func TestJourneyActiveWorkspaceIsNotDeleted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "demo")
	w.start()
	w.llm.Script(
		testkit.Use(testkit.Call{ID: "sel", Name: "workspace_select", Arguments: `{"name":"demo"}`}),
		testkit.Say("demo is selected."),
	)
	w.ask(ownerID, "use the demo workspace", regexp.MustCompile(`demo is selected\.`))

	w.llm.Script(deleteCall(), testkit.Say("I can't delete demo while it is selected; select another workspace first."))
	m := w.send(ownerID, "delete the demo workspace")
	w.awaitNew(m, regexp.MustCompile(`can't delete demo`), "the model's answer")
	for _, s := range w.since(m) {
		if deleteApproval.MatchString(s.Text) || len(s.Msg.Components) > 0 {
			t.Fatalf("an approval was asked for deleting the active workspace: %q", s.Text)
		}
	}
	// What the tool told the model.
	reqs := w.llm.Requests()
	last := reqs[len(reqs)-1]
	found := false
	for _, msg := range last.Body.Messages {
		if msg.Role == "tool" && strings.Contains(msg.Content.Text, "active workspace") {
			found = true
		}
	}
	if !found {
		t.Errorf("the tool result did not say the workspace is the active one")
	}
	if !w.exists("demo") {
		t.Fatal("the active workspace was deleted")
	}
	st := w.ask(ownerID, "/status", statusRe)
	if strings.Contains(st.Text, "GUARDING") || !strings.Contains(st.Text, "Workspace: demo") {
		t.Fatalf("/status = %q", st.Text)
	}
}
