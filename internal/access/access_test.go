package access_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/access"
	"github.com/fetch-dev/fetch/internal/store"
)

func TestList(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := access.New(db, "discord", "1", []string{"2"})
	if err := l.Load(ctx); err != nil {
		t.Fatal(err)
	}
	apply := func(fx instincts.Effect, user string) string {
		t.Helper()
		var reply string
		var after func()
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			reply, after, err = l.ApplyTx(ctx, tx, "c", "1", instincts.Response{Effect: fx, User: user})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		after()
		return reply
	}
	for _, tc := range []struct {
		fx      instincts.Effect
		user    string
		reply   string
		allowed map[string]bool
	}{
		{instincts.AllowList, "", "2 (FETCH_ALLOWED_IDS)", map[string]bool{"1": false, "2": true, "3": false}},
		{instincts.AllowAdd, "3", "3 may now talk to me", map[string]bool{"3": true}},
		{instincts.AllowAdd, "3", "3 may talk to me already.", map[string]bool{"3": true}},
		{instincts.AllowAdd, "2", "already (FETCH_ALLOWED_IDS)", map[string]bool{"2": true}},
		{instincts.AllowAdd, "1", "That is the owner", nil},
		{instincts.AllowList, "", "these may talk to me: 2 (FETCH_ALLOWED_IDS), 3 (added ", nil},
		{instincts.AllowRemove, "2", "FETCH_ALLOWED_IDS, which /allow cannot change", map[string]bool{"2": true}},
		{instincts.AllowRemove, "3", "3 may no longer talk to me", map[string]bool{"3": false}},
		{instincts.AllowRemove, "3", "3 was not allowed; nothing changed.", map[string]bool{"3": false}},
	} {
		if got := apply(tc.fx, tc.user); !strings.Contains(got, tc.reply) {
			t.Errorf("%s %s: %q; want %q", tc.fx, tc.user, got, tc.reply)
		}
		for id, want := range tc.allowed {
			if l.Allowed(id) != want {
				t.Errorf("after %s %s: Allowed(%s) = %t", tc.fx, tc.user, id, !want)
			}
		}
	}
	// Persisted: a new List (the next start) loads the ids added.
	apply(instincts.AllowAdd, "4")
	again := access.New(db, "discord", "1", nil)
	if again.Allowed("4") {
		t.Fatal("allowed before Load")
	}
	if err := again.Load(ctx); err != nil || !again.Allowed("4") || again.Allowed("3") {
		t.Fatalf("after Load: 4 %t, 3 %t, %v; want 4 only", again.Allowed("4"), again.Allowed("3"), err)
	}
}
