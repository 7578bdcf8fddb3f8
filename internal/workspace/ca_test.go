package workspace_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/trust"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// TestCloneTrustsCA: a clone from a server behind a private CA fails
// verification until the registry is told to trust the CA, which reaches
// host git on its command line only.
func TestCloneTrustsCA(t *testing.T) {
	ca := testkit.NewCA(t)
	gh := testkit.NewGitHubTLS(t, ca)
	repo := gh.AddRepo("acme", "app", map[string]string{"go.mod": "module app\n"})
	gh.SetPublic(repo.FullName, true)
	root := filepath.Join(t.TempDir(), "workspaces")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	_, err := workspace.New(root, log).Clone(t.Context(), "app", repo.CloneURL)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a clone without the CA: %v; want a certificate failure", err)
	}
	info, err := workspace.New(root, log).TrustCA(trust.CA{File: ca.File}).Clone(t.Context(), "app", repo.CloneURL)
	if err != nil {
		t.Fatalf("a clone trusting the CA: %v", err)
	}
	if info.Branch != "main" {
		t.Errorf("clone = %+v", info)
	}
	if gh.Requests("GIT git-upload-pack") == 0 {
		t.Error("the clone never reached the fake GitHub")
	}
}
