package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/fetch-dev/fetch/internal/store"
)

func TestAllowedUsers(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	change := func(fn func(tx *sql.Tx) (bool, error)) bool {
		t.Helper()
		var changed bool
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			changed, err = fn(tx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return changed
	}
	allow := func(id string) bool {
		return change(func(tx *sql.Tx) (bool, error) {
			return db.AllowUserTx(ctx, tx, store.AllowedUser{Channel: "discord", UserID: id, AddedBy: "1"})
		})
	}
	disallow := func(id string) bool {
		return change(func(tx *sql.Tx) (bool, error) { return db.DisallowUserTx(ctx, tx, "discord", id) })
	}
	ids := func(channel string) []string {
		t.Helper()
		us, err := db.AllowedUsers(ctx, channel)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, u := range us {
			if u.AddedBy != "1" || u.AddedAt.IsZero() {
				t.Errorf("allowed user %+v: want who added them and when", u)
			}
			out = append(out, u.UserID)
		}
		return out
	}
	if !allow("42") || allow("42") {
		t.Fatal("allow 42 twice: want added, then already there")
	}
	if !allow("43") {
		t.Fatal("allow 43: not added")
	}
	if got := ids("discord"); len(got) != 2 || got[0] != "42" || got[1] != "43" {
		t.Fatalf("allowed = %v; want [42 43]", got)
	}
	if got := ids("term"); len(got) != 0 {
		t.Fatalf("allowed on another channel = %v; want none", got)
	}
	if !disallow("42") || disallow("42") {
		t.Fatal("disallow 42 twice: want removed, then not there")
	}
	if got := ids("discord"); len(got) != 1 || got[0] != "43" {
		t.Fatalf("allowed = %v; want [43]", got)
	}
	// A rolled-back transaction changes nothing.
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := db.AllowUserTx(ctx, tx, store.AllowedUser{Channel: "discord", UserID: "44", AddedBy: "1"}); err != nil {
			return err
		}
		return context.Canceled
	})
	if err != context.Canceled {
		t.Fatalf("tx = %v", err)
	}
	if got := ids("discord"); len(got) != 1 {
		t.Fatalf("allowed after a rollback = %v; want [43]", got)
	}
}

func TestUnselect(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	for _, c := range []string{"a", "b", "c"} {
		if _, err := db.EnsureConversation(ctx, c, "term", "u"); err != nil {
			t.Fatal(err)
		}
	}
	db.SetWorkspace(ctx, "a", "api")
	db.SetWorkspace(ctx, "b", "api")
	db.SetWorkspace(ctx, "c", "web")
	n, err := db.Unselect(ctx, "api")
	if err != nil || n != 2 {
		t.Fatalf("Unselect = %d, %v; want 2", n, err)
	}
	for id, want := range map[string]string{"a": "", "b": "", "c": "web"} {
		if c, _ := db.Conversation(ctx, id); c.Workspace != want {
			t.Errorf("conversation %s has %q selected; want %q", id, c.Workspace, want)
		}
	}
}
