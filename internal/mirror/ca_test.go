package mirror_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/trust"
)

// TestPushTrustsCA: a push to a server behind a private CA is
// ErrUntrusted until the mirror is given the CA, which reaches host git
// on its command line; then push and fetch work.
func TestPushTrustsCA(t *testing.T) {
	e := newEnv(t)
	ca := testkit.NewCA(t)
	gh := testkit.NewGitHubTLS(t, ca)
	repo := gh.AddRepo("acme", "app", nil)
	remote := mirror.Remote{URL: repo.CloneURL, Token: gh.Token}
	ctx := context.Background()
	main := e.mustImport(e.ref("main", ""))
	e.sh(`git checkout -q -b fetch/t1 && echo b > b.txt && git add b.txt && git commit -qm b`)
	tip := e.mustImport(e.ref("fetch/t1", main))

	if err := e.m.Push(ctx, remote, e.name, "fetch/t1", "fetch/t1", false); !errors.Is(err, mirror.ErrUntrusted) {
		t.Fatalf("push without the CA: %v, want ErrUntrusted", err)
	}
	secrets, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	trusting, err := mirror.New(mirror.Config{Root: e.root, Kennel: e.k, Secrets: secrets, Logger: slog.New(slog.DiscardHandler), CA: trust.CA{File: ca.File}})
	if err != nil {
		t.Fatal(err)
	}
	if err := trusting.Push(ctx, remote, e.name, "fetch/t1", "fetch/t1", false); err != nil {
		t.Fatalf("push with the CA: %v", err)
	}
	if got := gh.Tip(repo.FullName, "fetch/t1"); got != tip {
		t.Errorf("fetch/t1 on the server at %q, want %s", got, tip)
	}
	if sha, err := trusting.FetchBase(ctx, remote, e.name, "main"); err != nil || sha != gh.Tip(repo.FullName, "main") {
		t.Errorf("fetch base with the CA: %s, %v", sha, err)
	}
}
