package mirror_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// TestMain checks that no call leaves a goroutine behind (the kennel's
// stream readers, os/exec's copiers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a kennel with one workspace (a git repository with a main
// branch) and a mirror.
type env struct {
	t    testing.TB
	k    *kennel.Kennel
	ws   string // host path of the workspace
	name string // workspace name
	root string // the mirror's root
	m    *mirror.Mirror
}

// fixedNow dates rebased commits.
var fixedNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newEnv(t testing.TB) *env {
	t.Helper()
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{
		Image:    testkit.KennelImage(t),
		Instance: "mirror-test-" + strings.ToLower(rand.Text()[:10]),
		Grace:    time.Second,
	}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, k: k, ws: testkit.KennelWorkspace(t), name: "demo", root: filepath.Join(t.TempDir(), "repos")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := k.Remove(ctx, e.ws); err != nil {
			t.Errorf("remove kennel: %v", err)
		}
	})
	secrets, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	e.m, err = mirror.New(mirror.Config{
		Root:    e.root,
		Kennel:  k,
		Secrets: secrets,
		Logger:  slog.New(slog.NewTextHandler(t.Output(), nil)),
		Now:     func() time.Time { return fixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.sh(`git init -q -b main . && printf 'one\ntwo\nthree\n' > a.txt && git add a.txt && git commit -qm "first"`)
	return e
}

// sh runs a script in the workspace, in the kennel, as a coding CLI would
// (test code: the script is ours), and returns its trimmed stdout.
func (e *env) sh(script string) string {
	e.t.Helper()
	return e.shIn(e.ws, script)
}

func (e *env) shIn(dir, script string) string {
	e.t.Helper()
	var out, errOut strings.Builder
	res, err := e.k.Exec(context.Background(), kennel.ExecSpec{
		Workspace: e.ws,
		Dir:       dir,
		Argv:      []string{"sh", "-ec", script},
		Env: []string{
			"GIT_AUTHOR_NAME=Coder", "GIT_AUTHOR_EMAIL=coder@example.com",
			"GIT_COMMITTER_NAME=Coder", "GIT_COMMITTER_EMAIL=coder@example.com",
			"GIT_AUTHOR_DATE=1700000000 +0200", "GIT_COMMITTER_DATE=1700000000 +0200",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
		},
		Timeout: time.Minute,
	}, func(s kennel.Stream, line []byte) {
		if s == kennel.Stdout {
			out.Write(line)
			out.WriteByte('\n')
		} else {
			errOut.Write(line)
			errOut.WriteByte('\n')
		}
	})
	if err != nil || res.ExitCode != 0 {
		e.t.Fatalf("kennel script %q: %+v, %v\n%s", script, res, err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// ref reads a ref of the kennel's repository.
func (e *env) kennelRev(rev string) string {
	e.t.Helper()
	return e.sh("git rev-parse --verify " + rev)
}

// mirrorGit runs git on the mirror's repository (the test reads what
// Fetch wrote; nothing of the kennel's is run).
func (e *env) mirrorGit(args ...string) (string, error) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + filepath.Join(e.root, e.name+".git")}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func (e *env) mirrorRev(rev string) string {
	e.t.Helper()
	out, err := e.mirrorGit("rev-parse", "--verify", "-q", rev)
	if err != nil {
		return ""
	}
	return out
}

func (e *env) ref(branch, base string) mirror.Ref {
	return mirror.Ref{Workspace: e.name, Path: e.ws, Branch: branch, Base: base}
}

func (e *env) mustImport(r mirror.Ref) string {
	e.t.Helper()
	sha, err := e.m.Import(context.Background(), r)
	if err != nil {
		e.t.Fatalf("import %s: %v", r.Branch, err)
	}
	return sha
}

// remote is a bare repository served over git's smart HTTP (git
// http-backend through net/http/cgi) on 127.0.0.1, behind HTTP Basic
// auth whose password is the token.
type remote struct {
	dir   string // the bare repository
	url   string
	token string
}

func newRemote(t testing.TB) *remote {
	t.Helper()
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	root := t.TempDir()
	r := &remote{dir: filepath.Join(root, "repo.git"), token: "tok-" + rand.Text()}
	hostGit(t, "", "init", "-q", "--bare", "-b", "main", r.dir)
	hostGit(t, r.dir, "config", "http.receivepack", "true")
	// A protected branch: the pre-receive hook refuses any update of it.
	hook := filepath.Join(r.dir, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nwhile read old new ref; do [ \"$ref\" = refs/heads/protected ] && { echo protected branch >&2; exit 1; }; done; exit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cgiHandler := &cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, pw, ok := req.BasicAuth(); !ok || pw != r.token {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/repo.git"
	return r
}

// hostGit runs git on a test-owned directory.
func hostGit(t testing.TB, gitDir string, args ...string) string {
	t.Helper()
	if gitDir != "" {
		args = append([]string{"--git-dir=" + gitDir}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// nopKennel fails every exec: for tests that must not reach a kennel.
type nopKennel struct{}

func (nopKennel) Exec(context.Context, kennel.ExecSpec, kennel.LineHandler) (kennel.Result, error) {
	return kennel.Result{}, errors.New("no kennel in this test")
}
