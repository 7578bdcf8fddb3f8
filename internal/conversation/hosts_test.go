package conversation_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/hosts"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// hostsEnv is a conversation whose /hosts is the real one on its store,
// with the way out on or off.
func hostsEnv(t *testing.T, on bool) *env {
	t.Helper()
	db := openDB(t, t.TempDir()+"/fetch.db")
	return newEnvOn(t, db, conversation.Config{
		Workspaces: names{"api", "web"},
		Hosts:      hosts.New(hosts.Config{Store: db, On: on, Switch: "FETCH_EGRESS", Harness: "qwen", Defaults: []string{"dashscope.aliyuncs.com"}}),
	})
}

// allowedHosts reads what the proxy would be told for each workspace.
func allowedHosts(t *testing.T, db *store.DB) map[string][]string {
	t.Helper()
	all, err := db.WorkspaceHosts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestHostsChangeTheSelectedWorkspace: /hosts add and remove change the
// selected workspace's hosts in the store (each change in the audit log),
// a bad entry is refused with the form expected and changes nothing, and
// /status and /hosts show what is allowed.
func TestHostsChangeTheSelectedWorkspace(t *testing.T) {
	e := hostsEnv(t, true)
	for i, tc := range []struct {
		text  string
		reply []string
		hosts map[string][]string
	}{
		{"/hosts add allowed.example.org", []string{"No workspace is selected: /use NAME selects one"}, map[string][]string{}},
		{"/use api", []string{"Workspace api selected"}, map[string][]string{}},
		{"/hosts add https://allowed.example.org/x", []string{`Nothing changed: "https://allowed.example.org/x": a URL or a host with a port`, egress.HostForm}, map[string][]string{}},
		{"/hosts add *.org", []string{"Nothing changed: ", "a wildcard on a top-level domain"}, map[string][]string{}},
		{"/hosts add Allowed.Example.org", []string{
			"Workspace api's runs may now reach allowed.example.org, from the next run on (hosts allowed: allowed.example.org). /hosts remove allowed.example.org undoes it.",
		}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/hosts add allowed.example.org", []string{"allowed.example.org was allowed to workspace api already; nothing changed."}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/hosts add *.npm.example.com", []string{"(hosts allowed: *.npm.example.com, allowed.example.org)"}, map[string][]string{"api": {"*.npm.example.com", "allowed.example.org"}}},
		{"/status", []string{"\nWay out: proxy; hosts allowed: *.npm.example.com, allowed.example.org\n"}, map[string][]string{"api": {"*.npm.example.com", "allowed.example.org"}}},
		{"/hosts", []string{
			"Way out: only through Fetch's proxy",
			"Hosts allowed to workspace api: *.npm.example.com, allowed.example.org\n",
			"qwen (the default coding CLI) also reaches: dashscope.aliyuncs.com",
		}, map[string][]string{"api": {"*.npm.example.com", "allowed.example.org"}}},
		{"/hosts remove *.npm.example.com", []string{"Workspace api's runs may no longer reach *.npm.example.com, from the next run on (hosts allowed: allowed.example.org)."}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/hosts remove nosuch.example.org", []string{"nosuch.example.org is not among the hosts allowed to workspace api; nothing changed."}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/use web", []string{"Workspace web selected"}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/hosts", []string{"Hosts allowed to workspace web: none (/hosts add HOST allows one)"}, map[string][]string{"api": {"allowed.example.org"}}},
		{"/status", []string{"\nWay out: proxy; hosts allowed: none\n"}, map[string][]string{"api": {"allowed.example.org"}}},
	} {
		e.say(t, tc.text)
		got := e.rec.WaitFor(t, i+1)
		for _, want := range tc.reply {
			if reply := got[i].Reply.Text; !strings.Contains(reply+"\n", want) {
				t.Errorf("%s: reply\n%s\nwant %q", tc.text, reply, want)
			}
		}
		e.idle(t)
		if diff := cmp.Diff(tc.hosts, allowedHosts(t, e.db)); diff != "" {
			t.Errorf("after %s, hosts (-want +got):\n%s", tc.text, diff)
		}
	}
	log, err := e.db.AuditLog(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]int{}
	for _, a := range log {
		if a.Actor == owner && (a.Action == "hosts_add" || a.Action == "hosts_remove") && strings.HasPrefix(a.Detail, "Workspace api's runs may ") {
			changes[a.Action]++
		}
	}
	if diff := cmp.Diff(map[string]int{"hosts_add": 2, "hosts_remove": 1}, changes); diff != "" {
		t.Errorf("audit entries of changes (-want +got):\n%s\n%+v", diff, log)
	}
}

// TestHostsAreTheOwners: an allowed user who is not the owner is refused
// /hosts, and nothing changes.
func TestHostsAreTheOwners(t *testing.T) {
	const friend, friendConv = "222", "dm:222"
	db := openDB(t, t.TempDir()+"/fetch.db")
	e := newEnvOn(t, db, conversation.Config{
		Workspaces: names{"api"},
		Hosts:      hosts.New(hosts.Config{Store: db, On: true, Switch: "FETCH_EGRESS"}),
		RoleOf: func(_, userID string) chat.Role {
			switch userID {
			case owner:
				return chat.Owner
			case friend:
				return chat.Allowed
			}
			return ""
		},
	})
	for i, text := range []string{"/use api", "/hosts add allowed.example.org", "/hosts"} {
		if err := e.mgr.Receive(t.Context(), chat.Message{Channel: "test", ConversationID: friendConv, UserID: friend, Text: text}); err != nil {
			t.Fatal(err)
		}
		got := e.rec.WaitFor(t, i+1)
		if i > 0 && !strings.HasPrefix(got[i].Reply.Text, "Only the owner can see or change the hosts a workspace's runs may reach.") {
			t.Errorf("%s from an allowed user: %q", text, got[i].Reply.Text)
		}
	}
	if all := allowedHosts(t, db); len(all) != 0 {
		t.Errorf("an allowed user changed the hosts: %v", all)
	}
}

// TestStatusSaysTheWayOutIsOff: with the way out off, /status says so and
// /hosts still keeps the hosts for when it is on.
func TestStatusSaysTheWayOutIsOff(t *testing.T) {
	e := hostsEnv(t, false)
	for i, tc := range []struct{ text, reply string }{
		{"/status", "\nWay out: off (FETCH_EGRESS=off): the kennels reach any host"},
		{"/use api", "Workspace api selected"},
		{"/hosts add allowed.example.org", "The way out is off (FETCH_EGRESS=off): the kennels reach any host until it is on."},
		{"/hosts", "Way out: off (FETCH_EGRESS=off): the kennels reach any host, with the coding CLIs' keys inside them; these hosts count once it is on.\nHosts allowed to workspace api: allowed.example.org"},
	} {
		e.say(t, tc.text)
		if got := e.rec.WaitFor(t, i+1); !strings.Contains(got[i].Reply.Text, tc.reply) {
			t.Errorf("%s: reply\n%s\nwant %q", tc.text, got[i].Reply.Text, tc.reply)
		}
	}
	e.idle(t)
	if diff := cmp.Diff(map[string][]string{"api": {"allowed.example.org"}}, allowedHosts(t, e.db)); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
}
