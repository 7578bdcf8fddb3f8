package store_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWorkspaceHosts: a host is allowed to one workspace once; a change
// made in a transaction is seen by it before it commits, and by everyone
// once it did; a rolled back one is not kept.
func TestWorkspaceHosts(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	if added, err := db.AllowHost(ctx, "api", "b.example.org", "fetch workspace"); err != nil || !added {
		t.Fatalf("AllowHost: %v, %v", added, err)
	}
	if added, err := db.AllowHost(ctx, "api", "b.example.org", "fetch workspace"); err != nil || added {
		t.Fatalf("AllowHost again: %v, %v; want false", added, err)
	}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if added, err := db.AllowHostTx(ctx, tx, "api", "a.example.org", "100"); err != nil || !added {
			t.Fatalf("AllowHostTx: %v, %v", added, err)
		}
		if added, err := db.AllowHostTx(ctx, tx, "web", "a.example.org", "100"); err != nil || !added {
			t.Fatalf("AllowHostTx to web: %v, %v", added, err)
		}
		got, err := db.HostsOfTx(ctx, tx, "api")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a.example.org", "b.example.org"}, got); diff != "" {
			t.Errorf("HostsOfTx (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rollback := errors.New("roll back")
	_ = db.Tx(ctx, func(tx *sql.Tx) error {
		if removed, err := db.DisallowHostTx(ctx, tx, "api", "a.example.org"); err != nil || !removed {
			t.Fatalf("DisallowHostTx: %v, %v", removed, err)
		}
		return rollback
	})
	if removed, err := db.DisallowHost(ctx, "api", "nosuch.example.org"); err != nil || removed {
		t.Fatalf("DisallowHost of a host never allowed: %v, %v; want false", removed, err)
	}
	got, err := db.WorkspaceHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"api": {"a.example.org", "b.example.org"}, "web": {"a.example.org"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkspaceHosts (-want +got):\n%s", diff)
	}
}
