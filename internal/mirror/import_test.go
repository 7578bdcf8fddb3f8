package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fetch-dev/fetch/internal/mirror"
)

func TestImport(t *testing.T) {
	e := newEnv(t)
	main := e.kennelRev("main")
	// The task's branch in a worktree, as the task engine makes it.
	wt := e.ws + "/.fetch/worktrees/t1"
	e.sh(`git worktree add -q -b fetch/t1 .fetch/worktrees/t1 main`)
	e.shIn(wt, `echo work > b.txt && git add b.txt && git commit -qm "add b" && echo more >> b.txt && git commit -qam "more b"`)
	r := e.ref("fetch/t1", main)
	r.Dir = wt

	// The mirror lacks the base: a full bundle.
	sha := e.mustImport(r)
	if want := e.kennelRev("fetch/t1"); sha != want || e.mirrorRev("refs/heads/fetch/t1") != want {
		t.Fatalf("imported %s, mirror has %s; want %s", sha, e.mirrorRev("refs/heads/fetch/t1"), want)
	}
	if e.mirrorRev(main+"^{commit}") != main {
		t.Errorf("the base's history did not come with the full bundle")
	}

	// The mirror has the base now: only the new commits cross.
	e.shIn(wt, `echo again >> b.txt && git commit -qam "again"`)
	sha = e.mustImport(r)
	if want := e.kennelRev("fetch/t1"); sha != want || e.mirrorRev("refs/heads/fetch/t1") != want {
		t.Fatalf("second import: %s, want %s", sha, want)
	}

	// The kennel rewrote the branch: the import follows it (forced).
	e.shIn(wt, `git commit -q --amend -m "again, reworded"`)
	sha = e.mustImport(r)
	if want := e.kennelRev("fetch/t1"); sha != want || e.mirrorRev("refs/heads/fetch/t1") != want {
		t.Fatalf("import after a rewrite: %s, want %s", sha, want)
	}

	// Nothing new: the same tip.
	if again := e.mustImport(r); again != sha {
		t.Errorf("import of an unchanged branch: %s, want %s", again, sha)
	}

	// A missing branch.
	if _, err := e.m.Import(context.Background(), e.ref("fetch/none", "")); err == nil {
		t.Errorf("import of a missing branch succeeded")
	}
	if err := e.m.Remove(context.Background(), e.name, "fetch/t1"); err != nil || e.mirrorRev("refs/heads/fetch/t1") != "" {
		t.Errorf("remove: %v; ref %q", err, e.mirrorRev("refs/heads/fetch/t1"))
	}
	if err := e.m.Remove(context.Background(), e.name, "fetch/t1"); err != nil {
		t.Errorf("remove again: %v", err)
	}
	if err := e.m.Delete(context.Background(), e.name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, e.name+".git")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mirror still there after Delete: %v", err)
	}
	if err := e.m.Delete(context.Background(), e.name); err != nil {
		t.Errorf("delete again: %v", err)
	}
}

func TestImportRefusesObjectsFailingFsck(t *testing.T) {
	e := newEnv(t)
	main := e.mustImport(e.ref("main", ""))
	// A commit with a broken author date, written past git's checks.
	e.sh(`tree=$(git rev-parse main^{tree})
bad=$(printf 'tree %s\nparent %s\nauthor Bad <bad@example.com> notadate +0000\ncommitter Bad <bad@example.com> 1700000000 +0000\n\nbad\n' "$tree" "$(git rev-parse main)" | git hash-object -t commit -w --literally --stdin)
git update-ref refs/heads/fetch/bad "$bad"`)
	_, err := e.m.Import(context.Background(), e.ref("fetch/bad", main))
	if !errors.Is(err, mirror.ErrBadBundle) {
		t.Fatalf("import of a broken commit: %v, want ErrBadBundle", err)
	}
	t.Logf("refused: %v", err)
	if got := e.mirrorRev("refs/heads/fetch/bad"); got != "" {
		t.Errorf("the mirror has fetch/bad at %s", got)
	}
	// The full bundle too.
	_, err = e.m.Import(context.Background(), e.ref("fetch/bad", ""))
	if !errors.Is(err, mirror.ErrBadBundle) || e.mirrorRev("refs/heads/fetch/bad") != "" {
		t.Fatalf("full import of a broken commit: %v", err)
	}
}

func TestImportBundleBound(t *testing.T) {
	e := newEnv(t)
	m, err := mirror.New(mirror.Config{Root: e.root, Kennel: e.k, MaxBundle: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Import(context.Background(), e.ref("main", ""))
	if !errors.Is(err, mirror.ErrTooLarge) {
		t.Fatalf("import over the bound: %v, want ErrTooLarge", err)
	}
	if got := e.mirrorRev("refs/heads/main"); got != "" {
		t.Errorf("the mirror has main at %s", got)
	}
}

func TestImportRejectsBadArguments(t *testing.T) {
	m, err := mirror.New(mirror.Config{Root: t.TempDir(), Kennel: nopKennel{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []mirror.Ref{
		{Workspace: "../x", Path: "/ws", Branch: "fetch/a"},
		{Workspace: "demo", Path: "ws", Branch: "fetch/a"},
		{Workspace: "demo", Path: "/ws", Branch: "-delete"},
		{Workspace: "demo", Path: "/ws", Branch: "a..b"},
		{Workspace: "demo", Path: "/ws", Branch: "fetch/a", Base: "main"},
	} {
		if _, err := m.Import(context.Background(), r); !errors.Is(err, mirror.ErrInvalid) {
			t.Errorf("import %+v: %v, want ErrInvalid", r, err)
		}
	}
}
