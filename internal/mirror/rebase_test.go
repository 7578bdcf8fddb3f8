package mirror_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/mirror"
)

func TestRebase(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	main := e.mustImport(e.ref("main", ""))
	// The task's two commits; upstream moved on meanwhile.
	e.sh(`git checkout -q -b fetch/t1 main && echo b > b.txt && git add b.txt && git commit -qm "add b" -m "body" && sed -i 1s/one/ONE/ a.txt && git commit -qam "shout one"`)
	e.sh(`git checkout -q -b up main && echo c > c.txt && git add c.txt && git commit -qm "add c" && sed -i 3s/three/THREE/ a.txt && git commit -qam "shout three"`)
	e.mustImport(e.ref("fetch/t1", main))
	up := e.mustImport(e.ref("up", main))

	sha, err := e.m.Rebase(ctx, e.name, "fetch/t1", "refs/heads/up")
	if err != nil {
		t.Fatalf("rebase: %v", err)
	}
	if e.mirrorRev("refs/heads/fetch/t1") != sha || e.mirrorRev(sha+"~2") != up {
		t.Fatalf("rebased to %s (ref %s), grandparent %s; want on %s", sha, e.mirrorRev("refs/heads/fetch/t1"), e.mirrorRev(sha+"~2"), up)
	}
	a, _ := e.mirrorGit("show", sha+":a.txt")
	if a != "ONE\ntwo\nTHREE" {
		t.Errorf("a.txt after the rebase: %q", a)
	}
	log, _ := e.mirrorGit("log", "--format=%an <%ae> %ad|%cn <%ce> %cd|%B", "--date=raw", "-2", sha)
	want := "Coder <coder@example.com> 1700000000 +0200|Fetch <fetch@localhost> 1893553445 +0000|shout one\n\n" +
		"Coder <coder@example.com> 1700000000 +0200|Fetch <fetch@localhost> 1893553445 +0000|add b\n\nbody"
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("rebased commits (-want +got):\n%s", diff)
	}

	// Up to date: nothing changes.
	if again, err := e.m.Rebase(ctx, e.name, "fetch/t1", up); err != nil || again != sha {
		t.Errorf("rebase again: %s, %v; want %s", again, err, sha)
	}

	// A conflict: files named, branch untouched.
	e.sh(`git checkout -q -b fetch/t2 main && sed -i 1s/one/uno/ a.txt && echo d > d.txt && git add d.txt && git commit -qam "uno"`)
	e.sh(`git checkout -q -b up2 main && sed -i 1s/one/eins/ a.txt && git commit -qam "eins"`)
	t2 := e.mustImport(e.ref("fetch/t2", main))
	e.mustImport(e.ref("up2", main))
	_, err = e.m.Rebase(ctx, e.name, "fetch/t2", "refs/heads/up2")
	var conflict *mirror.ConflictError
	if !errors.As(err, &conflict) || !slices.Equal(conflict.Files, []string{"a.txt"}) {
		t.Fatalf("conflicting rebase: %v, want a conflict in a.txt", err)
	}
	if got := e.mirrorRev("refs/heads/fetch/t2"); got != t2 {
		t.Errorf("fetch/t2 moved to %s after a conflict", got)
	}

	// A merge in the branch.
	e.sh(`git checkout -q -b fetch/t3 main && echo e > e.txt && git add e.txt && git commit -qm e && git merge -q --no-edit up2`)
	e.mustImport(e.ref("fetch/t3", main))
	if _, err := e.m.Rebase(ctx, e.name, "fetch/t3", "refs/heads/up"); !errors.Is(err, mirror.ErrNotLinear) {
		t.Errorf("rebase of a merge: %v, want ErrNotLinear", err)
	}

	// SendBase: the rebased branch, which the kennel never had, appears
	// in the workspace's repository.
	if err := e.m.SendBase(ctx, e.ref("", ""), "refs/heads/fetch/t1", "refs/remotes/fetch/rebased"); err != nil {
		t.Fatalf("send: %v", err)
	}
	if got := e.kennelRev("refs/remotes/fetch/rebased"); got != sha {
		t.Errorf("kennel has %s, want %s", got, sha)
	}
	if left := e.sh(`ls /tmp | grep fetch-send || true`); strings.TrimSpace(left) != "" {
		t.Errorf("bundle left in the kennel: %s", left)
	}
}
