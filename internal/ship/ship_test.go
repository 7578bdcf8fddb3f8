package ship_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseRemote(t *testing.T) {
	for _, tc := range []struct {
		url, host string
		want      string // owner/repo, "" for an error
	}{
		{"https://github.com/acme/app.git", "github.com", "acme/app"},
		{"https://github.com/acme/app", "github.com", "acme/app"},
		{"git@github.com:acme/app.git", "github.com", "acme/app"},
		{"ssh://git@github.com/acme/app", "github.com", "acme/app"},
		{"http://127.0.0.1:8080/acme/app.git", "127.0.0.1:8080", "acme/app"},
		{"https://gitlab.com/acme/app.git", "github.com", ""},
		{"https://github.com/acme", "github.com", ""},
		{"https://github.com/acme/app/extra", "github.com", ""},
		{"https://github.com/../etc.git", "github.com", ""},
		{"/srv/repos/app.git", "github.com", ""},
		{"", "github.com", ""},
	} {
		r, err := ship.ParseRemote(tc.url, tc.host)
		got := ""
		if err == nil {
			got = r.Owner + "/" + r.Repo
		} else if !errors.Is(err, ship.ErrNotGitHub) {
			t.Errorf("%q: error %v does not wrap ErrNotGitHub", tc.url, err)
		}
		if got != tc.want {
			t.Errorf("ParseRemote(%q, %q) = %q, %v; want %q", tc.url, tc.host, got, err, tc.want)
		}
	}
	if got := ship.WebHost("https://ghe.example.com/api/v3/"); got != "ghe.example.com" {
		t.Errorf("WebHost of an Enterprise API = %q", got)
	}
	if got := ship.WebHost("https://api.github.com/"); got != "github.com" {
		t.Errorf("WebHost of GitHub's API = %q", got)
	}
}

// world is a fake GitHub with acme/app, a kennel whose workspace "app" is a
// clone of it with a task branch, and a Shipper over both.
type world struct {
	gh   *testkit.GitHub
	repo testkit.GitHubRepo
	ws   string
	sh   *ship.Shipper
	db   *store.DB
	base string
	root *mirror.Mirror
}

func newWorld(t *testing.T, transport http.RoundTripper) *world {
	t.Helper()
	return newWorldWith(t, worldOptions{transport: transport})
}

// worldOptions vary a world.
type worldOptions struct {
	transport http.RoundTripper
	// script runs in the kennel after the task's commit, on its branch
	// (more commits of the task's); the hello commit's alone when empty.
	script string
	// maxScan is the mirror's Config.MaxScan.
	maxScan int
	// gate decides autonomous merges (Config.Gate).
	gate ship.Gate
}

func newWorldWith(t *testing.T, o worldOptions) *world {
	t.Helper()
	transport := o.transport
	docker := testkit.RequireDocker(t)
	gh := testkit.NewGitHub(t)
	repo := gh.AddRepo("acme", "app", nil)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	k, err := kennel.New(docker, kennel.Config{Image: testkit.KennelImage(t), Instance: "ship-test-" + strings.ToLower(rand.Text()[:10]), Grace: time.Second}, log)
	if err != nil {
		t.Fatal(err)
	}
	ws := testkit.KennelWorkspace(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		k.Remove(ctx, ws)
	})
	// The workspace as a clone from GitHub leaves it, owned by the
	// kennel's user.
	for _, args := range [][]string{
		{"clone", "-q", "--no-local", repo.Dir, ws},
		{"-C", ws, "remote", "set-url", "origin", repo.CloneURL},
	} {
		if out, err := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if os.Geteuid() == 0 {
		var uid, gid int
		fmt.Sscanf(kennel.DefaultUser, "%d:%d", &uid, &gid)
		filepath.WalkDir(ws, func(p string, _ os.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(p, uid, gid)
			}
			return err
		})
	}
	// The task's work, committed in the kennel as a coding CLI would.
	var out strings.Builder
	res, err := k.Exec(context.Background(), kennel.ExecSpec{
		Workspace: ws,
		Argv: []string{"sh", "-ec", "git checkout -q -b fetch/t1 && echo hello > hello.txt && git add hello.txt && git -c user.name=CLI -c user.email=cli@localhost commit -qm 'add hello' && " +
			cmp.Or(o.script, "true") + " && git rev-parse main"},
		Env:     []string{"GIT_AUTHOR_NAME=CLI", "GIT_AUTHOR_EMAIL=cli@localhost", "GIT_COMMITTER_NAME=CLI", "GIT_COMMITTER_EMAIL=cli@localhost"},
		Timeout: time.Minute,
	}, func(s kennel.Stream, line []byte) {
		if s == kennel.Stdout {
			out.Write(line)
		}
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("commit in the kennel: %+v %v %s", res, err, res.StderrTail)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	secrets, _ := redact.New()
	m, err := mirror.New(mirror.Config{Root: filepath.Join(t.TempDir(), "repos"), Kennel: k, Secrets: secrets, Logger: log, MaxScan: o.maxScan})
	if err != nil {
		t.Fatal(err)
	}
	client, err := github.New(github.Config{URL: gh.APIURL, Token: gh.Token, HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	sh := ship.New(ship.Config{Store: db, Mirror: m, GitHub: client, Token: gh.Token, WebHost: ship.WebHost(gh.APIURL), Logger: log, Gate: o.gate,
		Origin: func(context.Context, string) (string, error) { return repo.CloneURL, nil }})
	return &world{gh: gh, repo: repo, ws: ws, sh: sh, db: db, base: strings.TrimSpace(out.String()), root: m}
}

func (w *world) work() ship.Work {
	return ship.Work{TaskID: "t1", Workspace: "app", Path: w.ws, Dir: w.ws, Branch: "fetch/t1", Base: w.base, Goal: "Say hello\n\nin a file", Summary: "Added hello.txt.", Files: []string{"hello.txt +1 -0"}}
}

// Shipping twice opens one pull request, with the work on its branch; the
// workspace's repository is recorded from its origin at the first
// shipment.
func TestShipOpensOnePullRequest(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	res, err := w.sh.Ship(ctx, w.work())
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.sh.Ship(ctx, w.work())
	if err != nil {
		t.Fatal(err)
	}
	if res.PR.Number == 0 || again.PR != res.PR || again.Pushed != res.Pushed {
		t.Fatalf("shipments: %+v then %+v; want the same pull request and commit", res, again)
	}
	prs := w.gh.PRs("acme/app")
	if len(prs) != 1 || prs[0].Title != "Say hello" || !strings.Contains(prs[0].Body, "Added hello.txt.") || !strings.Contains(prs[0].Body, "hello.txt +1 -0") {
		t.Fatalf("pull requests: %+v", prs)
	}
	if got, ok := w.gh.File("acme/app", "fetch/t1", "hello.txt"); !ok || got != "hello\n" {
		t.Errorf("hello.txt on fetch/t1 = %q, %v", got, ok)
	}
	if st, _ := w.sh.Settings(ctx, "app"); st.Remote.Owner != "acme" || st.Remote.Repo != "app" || st.Mode != ship.PRRequired {
		t.Errorf("settings after the first shipment: %+v", st)
	}
}

// failPulls fails the creation of pull requests, as a GitHub outage
// between the push and the pull request would.
type failPulls struct{}

func (failPulls) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pulls") {
		return &http.Response{StatusCode: http.StatusBadGateway, Body: io.NopCloser(strings.NewReader(`{"message":"Server Error"}`)), Header: http.Header{"Content-Type": {"application/json"}}, Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A branch pushed whose pull request could not be opened is deleted again:
// no orphan branch on GitHub.
func TestNoOrphanBranch(t *testing.T) {
	w := newWorld(t, failPulls{})
	_, err := w.sh.Ship(context.Background(), w.work())
	if !errors.Is(err, github.ErrUnavailable) {
		t.Fatalf("Ship = %v; want ErrUnavailable", err)
	}
	if b := w.gh.Branches("acme/app"); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
	if strings.Contains(err.Error(), w.gh.Token) || strings.Contains(ship.Advice(err), w.gh.Token) {
		t.Error("the error holds the token")
	}
}

// A local workspace never pushes.
func TestLocalNeverPushes(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	if err := w.db.Tx(ctx, func(tx *sql.Tx) error {
		return ship.SetModeTx(ctx, tx, "app", ship.Local, store.FormatTime(time.Now()))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.sh.Ship(ctx, w.work()); !errors.Is(err, ship.ErrLocal) {
		t.Fatalf("Ship of a local workspace = %v; want ErrLocal", err)
	}
	if b := w.gh.Branches("acme/app"); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
}

// scanKey is an AWS access key id of the shape gitleaks' rule finds.
const scanKey = "AKIAZ3MHQ4XJ7KW2PLNB"

// A secret the branch's diff does not show — in a file added and removed
// again, in a commit message — stops the shipment before the branch is in
// Fetch's repository: a *SecretsError naming commit, place and rule, never
// the key; nothing on GitHub.
func TestShipScansEveryCommit(t *testing.T) {
	w := newWorldWith(t, worldOptions{script: "printf 'aws_access_key_id = " + scanKey + "\\n' > .env && git add .env && git commit -qm env && " +
		"git rm -q .env && git commit -qm 'no env' -m 'key was aws_access_key_id = " + scanKey + "'"})
	_, err := w.sh.Ship(context.Background(), w.work())
	var se *ship.SecretsError
	if !errors.As(err, &se) || len(se.Findings) != 2 || se.Incomplete {
		t.Fatalf("Ship = %v; want a *SecretsError with two findings", err)
	}
	msg := se.Error()
	for _, want := range []string{": .env:1 (aws-access-token)", ": commit message, line 3 (aws-access-token)", "commit "} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %q", want, msg)
		}
	}
	if strings.Contains(msg, scanKey[4:]) {
		t.Errorf("the error holds the key: %q", msg)
	}
	if b := w.gh.Branches("acme/app"); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
	if _, err := w.root.Scan(context.Background(), "app", w.base, "refs/heads/fetch/t1"); !errors.Is(err, mirror.ErrNotFound) {
		t.Errorf("the branch is in Fetch's repository (scan: %v)", err)
	}
}

// Work too large to be scanned whole is not pushed: a *SecretsError that
// says so, nothing on GitHub.
func TestShipRefusesWhatItCannotScanWhole(t *testing.T) {
	w := newWorldWith(t, worldOptions{maxScan: 4 << 10, script: "seq 1 3000 > big.txt && git add big.txt && git commit -qm big"})
	_, err := w.sh.Ship(context.Background(), w.work())
	var se *ship.SecretsError
	if !errors.As(err, &se) || !se.Incomplete || len(se.Findings) != 0 {
		t.Fatalf("Ship = %v; want a *SecretsError for an incomplete scan", err)
	}
	if !strings.Contains(se.Error(), "too large to be scanned whole") {
		t.Errorf("the error does not say why: %q", se.Error())
	}
	if b := w.gh.Branches("acme/app"); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
}
