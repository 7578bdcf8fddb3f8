package instincts_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
)

func TestHosts(t *testing.T) {
	set := instincts.New()
	friend := working()
	friend.UserID, friend.Role = "222", "allowed"
	for _, tc := range []struct {
		text  string
		st    instincts.State
		fx    instincts.Effect
		ws    string
		host  string
		reply string
	}{
		{"/hosts", working(), instincts.HostsList, "api", "", ""},
		{"/hosts list", working(), instincts.HostsList, "api", "", ""},
		{"/HOSTS add registry.npmjs.org", working(), instincts.HostsAdd, "api", "registry.npmjs.org", ""},
		{"/hosts ADD *.Example.com", working(), instincts.HostsAdd, "api", "*.Example.com", ""},
		// The runtime checks the host: instincts cannot import the proxy's rules.
		{"/hosts add https://x.example.org/a", working(), instincts.HostsAdd, "api", "https://x.example.org/a", ""},
		{"/hosts remove registry.npmjs.org", working(), instincts.HostsRemove, "api", "registry.npmjs.org", ""},
		{"/hosts add", working(), instincts.None, "", "", "Usage: /hosts · /hosts add HOST"},
		{"/hosts add a.example.org b.example.org", working(), instincts.None, "", "", "Usage: /hosts"},
		{"/hosts list all", working(), instincts.None, "", "", "Usage: /hosts"},
		{"/hosts allow a.example.org", working(), instincts.None, "", "", "Usage: /hosts"},
		{"/hosts add a.example.org", idle(), instincts.None, "", "", "No workspace is selected: /use NAME selects one"},
		{"/hosts", idle(), instincts.None, "", "", "No workspace is selected: /use NAME selects one"},
		{"/hosts add a.example.org", friend, instincts.None, "", "", "Only the owner can see or change the hosts"},
		{"/hosts", friend, instincts.None, "", "", "Only the owner"},
	} {
		r, ok := set.Match(tc.text, tc.st)
		if !ok || r.Instinct != "hosts" || r.Effect != tc.fx || r.Workspace != tc.ws || r.Host != tc.host || !strings.Contains(r.Reply, tc.reply) || tc.reply == "" && r.Reply != "" {
			t.Errorf("%q → %+v; want effect %q, workspace %q, host %q, reply %q", tc.text, r, tc.fx, tc.ws, tc.host, tc.reply)
		}
	}
}

func TestStatusShowsTheWayOut(t *testing.T) {
	set := instincts.New()
	st := working()
	st.WayOut = "proxy; hosts allowed to api: a.example.org, b.example.org"
	r, _ := set.Match("/status", st)
	if !strings.Contains(r.Reply, "\nWay out: proxy; hosts allowed to api: a.example.org, b.example.org\n") {
		t.Errorf("/status:\n%s", r.Reply)
	}
	if r, _ := set.Match("/status", working()); strings.Contains(r.Reply, "Way out") {
		t.Errorf("/status without a way out described:\n%s", r.Reply)
	}
}
