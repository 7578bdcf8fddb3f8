package mirror_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestHostileWorkspaceRunsNothingOnHost: a workspace whose .git config,
// hooks and attributes name programs. They would write a marker in a
// directory that exists only on the host; the kennel cannot reach it. After
// Import, Rebase and Scan, no marker exists.
func TestHostileWorkspaceRunsNothingOnHost(t *testing.T) {
	e := newEnv(t)
	hostOnly := t.TempDir()
	marker := filepath.Join(hostOnly, "pwned")
	cmd := "touch " + marker
	main := e.mustImport(e.ref("main", ""))
	// The work first, then the traps (they would trip the script itself).
	e.sh(`printf '* filter=evil diff=evil merge=evil\n' > .gitattributes
git checkout -q -b fetch/t1
echo x > x.txt && git add . && git commit -qm hostile
git checkout -q -b up main && echo y > y.txt && git add y.txt && git commit -qm up`)
	e.sh(`mkdir -p evilhooks
for h in pre-commit post-commit post-checkout post-merge pre-push reference-transaction post-rewrite pre-auto-gc; do
  printf '#!/bin/sh\n` + cmd + `\n' > .git/hooks/$h; cp .git/hooks/$h evilhooks/$h; chmod +x .git/hooks/$h evilhooks/$h
done
for kv in core.fsmonitor core.pager diff.external filter.evil.clean filter.evil.smudge diff.evil.textconv merge.evil.driver core.sshCommand uploadpack.packObjectsHook; do
  git config "$kv" "` + cmd + `"
done
git config core.hooksPath "$PWD/evilhooks"`)
	e.mustImport(e.ref("fetch/t1", main))
	e.mustImport(e.ref("up", main))
	ctx := context.Background()
	if _, err := e.m.Rebase(ctx, e.name, "fetch/t1", "refs/heads/up"); err != nil {
		t.Fatalf("rebase: %v", err)
	}
	if _, err := e.m.Scan(ctx, e.name, main, "refs/heads/fetch/t1"); err != nil {
		t.Fatalf("scan: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program named by the workspace ran on the host")
	}
	// The control: plain host git in the workspace does run the trap.
	ctl := exec.Command("git", "-c", "safe.directory=*", "status")
	ctl.Dir = e.ws
	ctl.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
	_ = ctl.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the trap is not live (host git status did not trip it): %v", err)
	}
}

// TestConcurrentCallsOnOneWorkspace: calls on one mirror are serialized;
// run under -race.
func TestConcurrentCallsOnOneWorkspace(t *testing.T) {
	e := newEnv(t)
	main := e.mustImport(e.ref("main", ""))
	e.sh(`for i in 1 2 3 4; do git branch fetch/c$i main; git checkout -q fetch/c$i; echo $i > f$i.txt; git add f$i.txt; git commit -qm c$i; done`)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			_, errs[i] = e.m.Import(context.Background(), e.ref("fetch/c"+string(rune('1'+i)), main))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("import %d: %v", i+1, err)
		}
	}
}
