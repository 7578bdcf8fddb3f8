package instincts_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
)

func TestShipAndPR(t *testing.T) {
	set := instincts.New()
	for _, tc := range []struct {
		text, role, workspace string
		effect                instincts.Effect
		ws, mode, action, id  string
		contains              string
	}{
		{"/ship", "owner", "api", instincts.ShipMode, "api", "", "", "", ""},
		{"/ship local", "owner", "api", instincts.ShipMode, "api", "local", "", "", ""},
		{"/ship web Autonomous", "owner", "api", instincts.ShipMode, "web", "autonomous", "", "", ""},
		{"/ship web", "owner", "", instincts.ShipMode, "web", "", "", "", ""},
		{"/ship", "owner", "", instincts.None, "", "", "", "", "No workspace is selected"},
		{"/ship web yolo", "owner", "", instincts.None, "", "", "", "", `"yolo" is not a shipping mode`},
		{"/ship ../x local", "owner", "", instincts.None, "", "", "", "", "is not a workspace name"},
		{"/ship web local", "allowed", "", instincts.None, "", "", "", "", "Only the owner"},
		{"/pr merge 1a2b3c4d", "owner", "", instincts.PR, "", "", "merge", "1a2b3c4d", ""},
		{"/pr ship 1a2b3c4d", "owner", "", instincts.PR, "", "", "ship", "1a2b3c4d", ""},
		{"/pr", "owner", "", instincts.None, "", "", "", "", "Usage: /pr"},
		{"/pr rebase 1a2b3c4d", "owner", "", instincts.None, "", "", "", "", "is not something"},
		{"/pr close ;rm", "owner", "", instincts.None, "", "", "", "", "is not a task id"},
		{"/pr close 1a2b3c4d", "allowed", "", instincts.None, "", "", "", "", "Only the owner"},
	} {
		st := instincts.State{Role: tc.role, Workspace: tc.workspace}
		r, ok := set.Match(tc.text, st)
		if !ok || r.Effect != tc.effect || r.Workspace != tc.ws || r.ShipMode != tc.mode || r.PRAction != tc.action || r.TaskID != tc.id || !strings.Contains(r.Reply, tc.contains) {
			t.Errorf("%q: got %+v", tc.text, r)
		}
	}
}
