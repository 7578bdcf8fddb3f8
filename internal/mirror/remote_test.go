package mirror_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/mirror"
)

func TestFetchBaseAndPush(t *testing.T) {
	e := newEnv(t)
	rem := newRemote(t)
	good := mirror.Remote{URL: rem.url, Token: rem.token}
	bad := mirror.Remote{URL: rem.url, Token: "wrong-" + rem.token}
	ctx := context.Background()

	main := e.mustImport(e.ref("main", ""))
	if err := e.m.Push(ctx, good, e.name, "main", "main", false); err != nil {
		t.Fatalf("push main: %v", err)
	}
	if got := hostGit(t, rem.dir, "rev-parse", "refs/heads/main"); got != main {
		t.Fatalf("remote main at %s, want %s", got, main)
	}
	if err := e.m.Push(ctx, good, e.name, "refs/heads/main", "main", false); err != nil {
		t.Errorf("the same push again: %v", err)
	}
	sha, err := e.m.FetchBase(ctx, good, e.name, "main")
	if err != nil || sha != main || e.mirrorRev("refs/remotes/origin/main") != main {
		t.Fatalf("fetch base: %s, %v; want %s", sha, err, main)
	}

	// A task branch, pushed, then rewritten and force-pushed.
	e.sh(`git checkout -q -b fetch/t1 && echo b > b.txt && git add b.txt && git commit -qm b`)
	e.mustImport(e.ref("fetch/t1", main))
	if err := e.m.Push(ctx, good, e.name, "fetch/t1", "fetch/t1", false); err != nil {
		t.Fatalf("push fetch/t1: %v", err)
	}
	e.sh(`git commit -q --amend -m "b, reworded"`)
	tip := e.mustImport(e.ref("fetch/t1", main))
	err = e.m.Push(ctx, good, e.name, "fetch/t1", "fetch/t1", false)
	if !errors.Is(err, mirror.ErrNonFastForward) {
		t.Errorf("plain push of a rewritten branch: %v, want ErrNonFastForward", err)
	}
	if err := e.m.Push(ctx, good, e.name, "fetch/t1", "fetch/t1", true); err != nil {
		t.Fatalf("force push to fetch/t1: %v", err)
	}
	if got := hostGit(t, rem.dir, "rev-parse", "refs/heads/fetch/t1"); got != tip {
		t.Errorf("remote fetch/t1 at %s, want %s", got, tip)
	}
	if err := e.m.Push(ctx, good, e.name, "fetch/t1", "main", true); !errors.Is(err, mirror.ErrForceRefused) {
		t.Errorf("force push to main: %v, want ErrForceRefused", err)
	}
	if err := e.m.Push(ctx, good, e.name, "fetch/t1", "protected", false); !errors.Is(err, mirror.ErrRejected) {
		t.Errorf("push to a branch the remote protects: %v, want ErrRejected", err)
	}

	// Wrong token: an authentication error that does not name it.
	for name, err := range map[string]error{
		"push":  e.m.Push(ctx, bad, e.name, "main", "main", false),
		"fetch": func() error { _, err := e.m.FetchBase(ctx, bad, e.name, "main"); return err }(),
	} {
		if !errors.Is(err, mirror.ErrAuth) {
			t.Errorf("%s with a wrong token: %v, want ErrAuth", name, err)
		}
		if err != nil && (strings.Contains(err.Error(), bad.Token) || strings.Contains(err.Error(), rem.token)) {
			t.Errorf("%s: the error names the token: %v", name, err)
		}
	}

	// No such repository; nobody listening.
	_, err = e.m.FetchBase(ctx, mirror.Remote{URL: strings.TrimSuffix(rem.url, "repo.git") + "none.git", Token: rem.token}, e.name, "main")
	if !errors.Is(err, mirror.ErrRepoNotFound) {
		t.Errorf("fetch from a missing repository: %v, want ErrRepoNotFound", err)
	}
	_, err = e.m.FetchBase(ctx, mirror.Remote{URL: "http://127.0.0.1:1/repo.git", Token: rem.token}, e.name, "main")
	if !errors.Is(err, mirror.ErrNetwork) {
		t.Errorf("fetch from a closed port: %v, want ErrNetwork", err)
	}
	for _, u := range []string{"http://example.com/repo.git", "https://x:y@example.com/repo.git", "ext::sh -c touch% /tmp/pwned", "file:///etc"} {
		if _, err := e.m.FetchBase(ctx, mirror.Remote{URL: u}, e.name, "main"); !errors.Is(err, mirror.ErrInvalid) {
			t.Errorf("fetch from %q: %v, want ErrInvalid", u, err)
		}
	}
}
