package instincts_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
)

func TestChecks(t *testing.T) {
	set := instincts.New()
	friend := working()
	friend.UserID, friend.Role = "222", "allowed"
	for _, tc := range []struct {
		text, action, arg string
		st                instincts.State
		fx                instincts.Effect
		reply             string
	}{
		{"/checks", "", "", working(), instincts.Checks, ""},
		{"/checks", "", "", friend, instincts.Checks, ""},
		{"/checks set sh ./test.sh", "set", "sh ./test.sh", working(), instincts.Checks, ""},
		{"/checks ADD  go vet ./...", "add", "go vet ./...", working(), instincts.Checks, ""},
		// The runtime parses the command: a pipeline is refused there.
		{"/checks set go test | tee", "set", "go test | tee", working(), instincts.Checks, ""},
		{"/checks auto", "auto", "", working(), instincts.Checks, ""},
		{"/checks off", "off", "", working(), instincts.Checks, ""},
		{"/checks failing hold", "failing", "hold", working(), instincts.Checks, ""},
		{"/checks set", "", "", working(), instincts.None, "needs its argument"},
		{"/checks off now", "", "", working(), instincts.None, "Usage: /checks"},
		{"/checks run", "", "", working(), instincts.None, `"run" is not something /checks does`},
		{"/checks set make test", "", "", friend, instincts.None, "Only the owner"},
		{"/checks", "", "", idle(), instincts.None, "No workspace is selected"},
	} {
		r, ok := set.Match(tc.text, tc.st)
		if !ok || r.Instinct != "checks" || r.Effect != tc.fx || r.ChecksAction != tc.action || r.ChecksArg != tc.arg ||
			!strings.Contains(r.Reply, tc.reply) || tc.reply == "" && r.Reply != "" || tc.fx != instincts.None && r.Workspace != "api" {
			t.Errorf("%q → %+v; want effect %q, action %q, arg %q, reply %q", tc.text, r, tc.fx, tc.action, tc.arg, tc.reply)
		}
	}
}
