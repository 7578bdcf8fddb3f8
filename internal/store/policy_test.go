package store_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/fetch-dev/fetch/internal/store"
)

func TestPolicyRules(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	add := func(r store.PolicyRule) (int64, bool) {
		t.Helper()
		id, added, err := db.AddPolicyRule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return id, added
	}
	list := func(ws, task string) []string {
		t.Helper()
		rs, err := db.PolicyRules(ctx, ws, task)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			if r.CreatedBy != "owner" || r.CreatedAt.IsZero() || r.ID == 0 {
				t.Errorf("rule %+v: want its id, who added it and when", r)
			}
			out = append(out, r.TaskID+":"+r.Tool+":"+r.Pattern)
		}
		return out
	}
	npm, added := add(store.PolicyRule{Workspace: "api", Tool: "shell", Pattern: "npm test", CreatedBy: "owner"})
	if !added || npm == 0 {
		t.Fatalf("first add: id %d added %v", npm, added)
	}
	if again, added := add(store.PolicyRule{Workspace: "api", Tool: "shell", Pattern: "npm test", CreatedBy: "owner"}); added || again != npm {
		t.Fatalf("same rule again: id %d added %v; want %d, not added", again, added, npm)
	}
	task, _ := add(store.PolicyRule{Workspace: "api", TaskID: "t1", Tool: "edit", Pattern: "src/**", CreatedBy: "owner"})
	add(store.PolicyRule{Workspace: "web", Tool: "shell", Pattern: "make", CreatedBy: "owner"})

	if got, want := list("api", ""), []string{":shell:npm test"}; !equal(got, want) {
		t.Fatalf("api rules without a task = %v; want %v", got, want)
	}
	if got, want := list("api", "t1"), []string{":shell:npm test", "t1:edit:src/**"}; !equal(got, want) {
		t.Fatalf("api rules of task t1 = %v; want %v", got, want)
	}
	if got, want := list("api", "t2"), []string{":shell:npm test"}; !equal(got, want) {
		t.Fatalf("api rules of task t2 = %v; want %v", got, want)
	}
	if r, err := db.PolicyRule(ctx, task); err != nil || r.Pattern != "src/**" || r.TaskID != "t1" {
		t.Fatalf("PolicyRule(%d) = %+v, %v", task, r, err)
	}
	if _, err := db.PolicyRule(ctx, 999); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PolicyRule(999) = %v; want ErrNotFound", err)
	}

	// A rule of another workspace is not removed through this one.
	if _, err := db.RemovePolicyRule(ctx, "web", npm); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("remove api's rule through web = %v; want ErrNotFound", err)
	}
	// A rolled-back removal changes nothing.
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := db.RemovePolicyRuleTx(ctx, tx, "api", npm); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("tx = %v", err)
	}
	if got := list("api", ""); len(got) != 1 {
		t.Fatalf("rules after a rollback = %v; want npm test still there", got)
	}
	r, err := db.RemovePolicyRule(ctx, "api", npm)
	if err != nil || r.Pattern != "npm test" {
		t.Fatalf("remove = %+v, %v", r, err)
	}
	if _, err := db.RemovePolicyRule(ctx, "api", npm); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("remove twice = %v; want ErrNotFound", err)
	}
	if n, err := db.EndTaskPolicyRules(ctx, "t1"); err != nil || n != 1 {
		t.Fatalf("end task t1 = %d, %v; want 1 rule removed", n, err)
	}
	if got := list("api", "t1"); len(got) != 0 {
		t.Fatalf("api rules after t1 ended = %v; want none", got)
	}
	if got := list("web", ""); len(got) != 1 {
		t.Fatalf("web rules = %v; want make", got)
	}
	if _, _, err := db.AddPolicyRule(ctx, store.PolicyRule{Workspace: "api", Tool: "shell", CreatedBy: "owner"}); err == nil {
		t.Fatal("a rule without a pattern was added")
	}
}

var errRollback = errors.New("roll back")

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
