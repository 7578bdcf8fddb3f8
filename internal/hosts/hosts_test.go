package hosts_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/hosts"
	"github.com/fetch-dev/fetch/internal/store"
)

// TestListKeepsToTheRule: what ApplyTx stores is canonical; an entry
// stored before the rule refused it can still be removed; Describe has
// nothing to say of an open way out without a workspace.
func TestListKeepsToTheRule(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := hosts.New(hosts.Config{Store: db, On: true, Switch: "FETCH_EGRESS", Harness: "claude"})
	apply := func(fx instincts.Effect, host string) string {
		t.Helper()
		var reply string
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			reply, _, err = l.ApplyTx(ctx, tx, "c", "100", instincts.Response{Effect: fx, Workspace: "api", Host: host})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return reply
	}
	if _, err := db.AllowHost(ctx, "api", "localhost", "an older fetch"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fx          instincts.Effect
		host, reply string
	}{
		{instincts.HostsAdd, "localhost", `Nothing changed: "localhost": a single-label name`},
		{instincts.HostsAdd, " Registry.NPMjs.org. ", "Workspace api's runs may now reach registry.npmjs.org, from the next run on (hosts allowed: localhost, registry.npmjs.org)."},
		{instincts.HostsRemove, "localhost", "Workspace api's runs may no longer reach localhost, from the next run on (hosts allowed: registry.npmjs.org)."},
		{instincts.HostsRemove, "localhost", `Nothing changed: "localhost": a single-label name`},
		{instincts.HostsList, "", "Hosts allowed to workspace api: registry.npmjs.org\nclaude (the default coding CLI) reaches only its model API besides these."},
	} {
		if got := apply(tc.fx, tc.host); !strings.Contains(got, tc.reply) {
			t.Errorf("%s %q: reply\n%s\nwant %q", tc.fx, tc.host, got, tc.reply)
		}
	}
	if got := l.Describe(ctx, ""); got != "" {
		t.Errorf("Describe without a workspace = %q", got)
	}
	if got := l.Describe(ctx, "api"); got != "proxy; hosts allowed: registry.npmjs.org" {
		t.Errorf("Describe(api) = %q", got)
	}
}
