package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// GitHub is a fake GitHub for tests that drive the real go-github client
// and the real git: the REST routes Fetch uses to ship work, under
// /api/v3/ as on GitHub Enterprise (so go-github's WithEnterpriseURLs
// points at it), and one real bare git repository per repository, served
// over git's smart HTTP protocol by `git http-backend` at
// /{owner}/{repo}.git. Pushes are real pushes; pull requests reference the
// real branches and merging one really moves its base.
//
// The REST side speaks GitHub's JSON (the field names of go-github's
// structs), its status codes and messages (401 "Bad credentials", 403
// "Resource not accessible by personal access token", 404 "Not Found",
// 422 "Validation Failed" with GitHub's error items, 405 and 409 on
// merges), ETags on every GET with 304 on a matching If-None-Match, and
// Link-header pagination (per_page, page). Tokens are accepted as
// "Authorization: Bearer X" or "token X"; git takes them as the password
// of HTTP Basic auth (any user name, e.g. x-access-token), and a missing
// or wrong token is a 401, so `git push` without credentials fails.
//
// Like GitHub, the fake notices pushes: an open pull request whose head
// branch is deleted is closed, and one whose head commits were pushed into
// its base is marked merged. Mergeability is computed at once with
// `git merge-tree` (GitHub's "null while computing" is not modelled).
// Merge methods "merge" and "squash" are supported; "rebase" answers 405
// as a repository with rebase merges disabled does.
//
// Tests arrange the world through its methods (AddRepo, SetPublic, Archive, Commit,
// Protect, MergePR, AddReview, AddReviewComment, NewToken,
// SetReadOnly, FailNext, RateLimitNext, Close) and read what the client did (PRs, Reviews, Branches,
// Tip, File, Requests, NotModified, Authorizations). The methods fail the
// test on error and are safe for concurrent use; they take repositories
// as "owner/name".
//
// The server listens on 127.0.0.1 and is closed at test cleanup; it
// starts no goroutine of its own beyond httptest's.
type GitHub struct {
	// Token is a token with read and write access to every repository.
	Token string
	// APIURL is the REST API's base, http://127.0.0.1:PORT/api/v3/
	// (https:// from NewGitHubTLS).
	APIURL string
	// URL is the web and git base, http://127.0.0.1:PORT/ (https://
	// from NewGitHubTLS).
	URL string
	// Login is the user every token belongs to.
	Login string

	t    testing.TB
	srv  *httptest.Server
	root string // GIT_PROJECT_ROOT: owner/name.git bare repositories
	tmp  string // scratch space for index files
	api  *http.ServeMux
	cgi  *cgi.Handler

	mu          sync.Mutex
	tokens      map[string]bool // token → read-only
	repos       map[string]*ghRepo
	users       map[string]int64
	nextID      int64
	scratch     int
	requests    map[string]int
	notModified int
	auths       []string
	faults      []ghFault
}

// GitHubRepo is a repository of the fake, as AddRepo made it.
type GitHubRepo struct {
	Owner, Name string
	// FullName is "owner/name", the key the fake's methods take.
	FullName string
	// CloneURL is the HTTPS-style clone URL, http://127.0.0.1:PORT/owner/name.git.
	CloneURL      string
	DefaultBranch string
	// Dir is the bare repository on disk.
	Dir string
}

// GitHubPR is a snapshot of a pull request of the fake.
type GitHubPR struct {
	Number            int
	Title, Body       string
	Head, Base        string
	State             string // "open" or "closed"
	Merged            bool
	HeadSHA           string
	MergeCommitSHA    string
	Reviews, Comments int
	// Draft: opened as a draft (and not marked ready since).
	Draft bool
}

type ghRepo struct {
	id            int64
	owner, name   string
	defaultBranch string
	dir           string
	archived      bool
	public        bool // cloned and fetched without a token
	protected     map[string]bool
	pulls         []*ghPull
	nextNumber    int
	created       time.Time
}

type ghPull struct {
	id                  int64
	number              int
	title, body, user   string
	head, base          string
	state               string
	merged              bool
	mergedBy            string
	headSHA, baseSHA    string
	mergeCommitSHA      string
	mergeable           *bool
	created, updated    time.Time
	closed, mergedAt    time.Time
	reviews             []ghReview
	comments            []ghComment
	maintainerCanModify bool
	draft               bool
}

type ghReview struct {
	id                int64
	user, state, body string
	commit            string
	at                time.Time
}

type ghComment struct {
	id, reviewID int64
	user, path   string
	body, commit string
	line         int
	at           time.Time
}

type ghFault struct {
	status    int
	rateLimit bool
}

const (
	ghDocs        = "https://docs.github.com/rest"
	ghTimeLayout  = "2006-01-02T15:04:05Z"
	ghPerPage     = 30
	ghMaxPerPage  = 100
	ghProtectFile = "fetch-protected-refs"
	// ghPreReceive refuses pushes to the refs listed in ghProtectFile, with
	// GitHub's GH006 message. It runs in the fake's own bare repository.
	ghPreReceive = `#!/bin/sh
list="${GIT_DIR:-.}/` + ghProtectFile + `"
while read old new ref; do
	if [ -f "$list" ] && grep -qxF "$ref" "$list"; then
		echo "error: GH006: Protected branch update failed for $ref." >&2
		exit 1
	fi
done
exit 0
`
)

// NewGitHub starts a fake GitHub on 127.0.0.1 with one full-access token
// (Token) for user "fetch-bot"; it stops at test cleanup. It needs git 2.38
// or newer on PATH.
func NewGitHub(t testing.TB) *GitHub {
	t.Helper()
	return newGitHub(t, nil)
}

// NewGitHubTLS is NewGitHub over HTTPS, as a GitHub Enterprise server
// behind a company's private CA: the REST API and git are served with a
// certificate that ca (NewCA) signed and nothing else trusts. URL, APIURL
// and clone URLs are https://127.0.0.1:PORT/….
func NewGitHubTLS(t testing.TB, ca *CA) *GitHub {
	t.Helper()
	return newGitHub(t, ca)
}

func newGitHub(t testing.TB, ca *CA) *GitHub {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("testkit: fake GitHub needs git: %v", err)
	}
	g := &GitHub{
		Login:    "fetch-bot",
		t:        t,
		root:     t.TempDir(),
		tmp:      t.TempDir(),
		tokens:   map[string]bool{},
		repos:    map[string]*ghRepo{},
		users:    map[string]int64{},
		requests: map[string]int{},
	}
	g.Token = g.NewToken(false)
	g.cgi = &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Dir:  g.root,
		Env: append([]string{
			"GIT_PROJECT_ROOT=" + g.root,
			"GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + g.tmp,
		}, gitIsolation...),
		InheritEnv: []string{"PATH"},
	}
	g.api = http.NewServeMux()
	g.routes()
	if ca == nil {
		g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	} else {
		g.srv = httptest.NewUnstartedServer(http.HandlerFunc(g.serve))
		g.srv.TLS = ca.ServerConfig(t)
		g.srv.StartTLS()
	}
	t.Cleanup(g.srv.Close)
	g.URL = g.srv.URL + "/"
	g.APIURL = g.srv.URL + "/api/v3/"
	return g
}

// gitIsolation keeps the user's and the system's git configuration out of
// the fake's repositories.
var gitIsolation = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}

// NewToken returns a new token the fake accepts; a read-only token may
// read (REST and git fetch) but not write: 403 on REST writes, a refused
// push, and permissions.push=false on the repository.
func (g *GitHub) NewToken(readOnly bool) string {
	tok := "ghp_" + randomHex(18)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokens[tok] = readOnly
	return tok
}

// SetReadOnly makes a known token read-only or gives it write access back.
func (g *GitHub) SetReadOnly(token string, readOnly bool) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.tokens[token]; !ok {
		g.t.Fatalf("testkit: fake GitHub: SetReadOnly: unknown token")
	}
	g.tokens[token] = readOnly
}

// AddRepo creates the repository owner/name with one commit on its
// default branch, main, holding files (path → content; a README.md when
// files is empty).
func (g *GitHub) AddRepo(owner, name string, files map[string]string) GitHubRepo {
	g.t.Helper()
	ctx := context.Background()
	g.mu.Lock()
	defer g.mu.Unlock()
	full := owner + "/" + name
	if _, ok := g.repos[full]; ok {
		g.t.Fatalf("testkit: fake GitHub: repository %s exists", full)
	}
	dir := filepath.Join(g.root, owner, name+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		g.t.Fatal(err)
	}
	steps := [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=main", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
	}
	for _, args := range steps {
		if _, err := g.gitRun(ctx, "", nil, args...); err != nil {
			g.t.Fatalf("testkit: fake GitHub: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hooks", "pre-receive"), []byte(ghPreReceive), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if len(files) == 0 {
		files = map[string]string{"README.md": "# " + name + "\n"}
	}
	if _, err := g.commitFiles(ctx, dir, "main", "", files, "Initial commit"); err != nil {
		g.t.Fatalf("testkit: fake GitHub: %v", err)
	}
	g.nextID++
	g.repos[full] = &ghRepo{
		id: g.nextID, owner: owner, name: name, defaultBranch: "main", dir: dir,
		protected: map[string]bool{}, nextNumber: 1, created: time.Now().UTC(),
	}
	return GitHubRepo{Owner: owner, Name: name, FullName: full, CloneURL: g.cloneURL(owner, name), DefaultBranch: "main", Dir: dir}
}

// SetPublic makes repo public (or private again): like GitHub, git
// clones and fetches it without a token; pushes still need one.
func (g *GitHub) SetPublic(repo string, public bool) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repo(repo).public = public
}

// Archive marks a repository archived: REST writes are 403 and
// "archived" is true.
func (g *GitHub) Archive(repo string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repo(repo).archived = true
}

// Commit writes content to path on branch upstream, as someone else's
// push would, and returns the new commit. A missing branch starts at the
// default branch's tip.
func (g *GitHub) Commit(repo, branch, path, content, message string) string {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	ctx := context.Background()
	parent, ok := g.refSHA(ctx, r.dir, branch)
	if !ok {
		parent, _ = g.refSHA(ctx, r.dir, r.defaultBranch)
	}
	sha, err := g.commitFiles(ctx, r.dir, branch, parent, map[string]string{path: content}, message)
	if err != nil {
		g.t.Fatalf("testkit: fake GitHub: commit: %v", err)
	}
	return sha
}

// Protect refuses pushes to branch (a pre-receive hook in the bare
// repository answers with GitHub's GH006 message) and its deletion over
// REST. Merging a pull request into it stays allowed.
func (g *GitHub) Protect(repo, branch string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	r.protected[branch] = true
	var refs []string
	for b := range r.protected {
		refs = append(refs, "refs/heads/"+b)
	}
	sort.Strings(refs)
	if err := os.WriteFile(filepath.Join(r.dir, ghProtectFile), []byte(strings.Join(refs, "\n")+"\n"), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// MergePR merges pull request number upstream with a merge commit, as a
// maintainer clicking the button would, and returns the merge commit.
func (g *GitHub) MergePR(repo string, number int) string {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	ctx := context.Background()
	if err := g.sync(ctx, r); err != nil {
		g.t.Fatal(err)
	}
	p := g.pull(r, number)
	status, msg, sha := g.merge(ctx, r, p, "merge", "", "", "octocat")
	if status != http.StatusOK {
		g.t.Fatalf("testkit: fake GitHub: merge %s#%d: %d %s", repo, number, status, msg)
	}
	return sha
}

// AddReview submits a review by user on pull request number; state is
// APPROVED, CHANGES_REQUESTED or COMMENTED.
func (g *GitHub) AddReview(repo string, number int, user, state, body string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	if err := g.sync(context.Background(), r); err != nil {
		g.t.Fatal(err)
	}
	p := g.pull(r, number)
	switch state {
	case "APPROVED", "CHANGES_REQUESTED", "COMMENTED":
	default:
		g.t.Fatalf("testkit: fake GitHub: review state %q", state)
	}
	g.nextID++
	now := time.Now().UTC()
	p.reviews = append(p.reviews, ghReview{id: g.nextID, user: user, state: state, body: body, commit: p.headSHA, at: now})
	p.updated = now
}

// AddReviewComment comments body on line of path in pull request number,
// by user. Like GitHub, a lone review comment comes with a COMMENTED
// review of empty body.
func (g *GitHub) AddReviewComment(repo string, number int, user, path string, line int, body string) {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	if err := g.sync(context.Background(), r); err != nil {
		g.t.Fatal(err)
	}
	p := g.pull(r, number)
	now := time.Now().UTC()
	g.nextID++
	review := ghReview{id: g.nextID, user: user, state: "COMMENTED", commit: p.headSHA, at: now}
	p.reviews = append(p.reviews, review)
	g.nextID++
	p.comments = append(p.comments, ghComment{id: g.nextID, reviewID: review.id, user: user, path: path, body: body, commit: p.headSHA, line: line, at: now})
	p.updated = now
}

// PRs returns the repository's pull requests, oldest first.
func (g *GitHub) PRs(repo string) []GitHubPR {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repo(repo)
	if err := g.sync(context.Background(), r); err != nil {
		g.t.Fatal(err)
	}
	var out []GitHubPR
	for _, p := range r.pulls {
		out = append(out, GitHubPR{
			Number: p.number, Title: p.title, Body: p.body, Head: p.head, Base: p.base,
			State: p.state, Merged: p.merged, HeadSHA: p.headSHA, MergeCommitSHA: p.mergeCommitSHA,
			Reviews: len(p.reviews), Comments: len(p.comments), Draft: p.draft,
		})
	}
	return out
}

// Branches returns the repository's branches and their tips.
func (g *GitHub) Branches(repo string) map[string]string {
	g.t.Helper()
	g.mu.Lock()
	dir := g.repo(repo).dir
	g.mu.Unlock()
	out, err := g.gitRun(context.Background(), dir, nil, "for-each-ref", "--format=%(refname:lstrip=2) %(objectname)", "refs/heads/")
	if err != nil {
		g.t.Fatalf("testkit: fake GitHub: %v", err)
	}
	branches := map[string]string{}
	for line := range strings.Lines(out) {
		name, sha, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok {
			branches[name] = sha
		}
	}
	return branches
}

// Tip returns the commit branch points at, "" if there is no such branch.
func (g *GitHub) Tip(repo, branch string) string {
	g.t.Helper()
	g.mu.Lock()
	dir := g.repo(repo).dir
	g.mu.Unlock()
	sha, _ := g.refSHA(context.Background(), dir, branch)
	return sha
}

// File returns the content of path at ref (a branch or a commit); ok is
// false when there is no such file.
func (g *GitHub) File(repo, ref, path string) (content string, ok bool) {
	g.t.Helper()
	g.mu.Lock()
	dir := g.repo(repo).dir
	g.mu.Unlock()
	out, err := g.gitRun(context.Background(), dir, nil, "cat-file", "blob", ref+":"+path)
	if err != nil {
		return "", false
	}
	return out, true
}

// Requests returns how many requests a route received; a route is its
// pattern without the /api/v3 prefix, e.g. "GET /repos/{owner}/{repo}/pulls/{number}",
// or, for git, "GIT info/refs", "GIT git-upload-pack", "GIT git-receive-pack".
func (g *GitHub) Requests(route string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.requests[route]
}

// NotModified returns how many GETs were answered 304 Not Modified.
func (g *GitHub) NotModified() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notModified
}

// Authorizations returns every Authorization header the fake received
// (REST and git), oldest first.
func (g *GitHub) Authorizations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.auths)
}

// FailNext answers the next n REST requests with status (e.g. 500, 502,
// 503) and GitHub's error body, whatever they ask.
func (g *GitHub) FailNext(n, status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for range n {
		g.faults = append(g.faults, ghFault{status: status})
	}
}

// RateLimitNext answers the next n REST requests as GitHub does when the
// primary rate limit is exhausted: 403 with X-RateLimit-Remaining: 0 and
// a reset a minute away.
func (g *GitHub) RateLimitNext(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for range n {
		g.faults = append(g.faults, ghFault{status: http.StatusForbidden, rateLimit: true})
	}
}

// Close stops the server now, as a GitHub that went away; requests fail
// with a connection error. Closing twice is fine; cleanup closes it too.
func (g *GitHub) Close() { g.srv.Close() }

// repo returns the repository full; the caller holds g.mu.
func (g *GitHub) repo(full string) *ghRepo {
	g.t.Helper()
	r, ok := g.repos[full]
	if !ok {
		g.t.Fatalf("testkit: fake GitHub: no repository %s", full)
	}
	return r
}

// pull returns pull request number of r; the caller holds g.mu.
func (g *GitHub) pull(r *ghRepo, number int) *ghPull {
	g.t.Helper()
	p := findPull(r, number)
	if p == nil {
		g.t.Fatalf("testkit: fake GitHub: no pull request %s/%s#%d", r.owner, r.name, number)
	}
	return p
}

func findPull(r *ghRepo, number int) *ghPull {
	for _, p := range r.pulls {
		if p.number == number {
			return p
		}
	}
	return nil
}

func (g *GitHub) cloneURL(owner, name string) string {
	return g.srv.URL + "/" + owner + "/" + name + ".git"
}

// serve splits the fake between the REST API and git.
func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/v3/") || r.URL.Path == "/api/graphql" {
		g.api.ServeHTTP(w, r)
		return
	}
	if strings.Contains(r.URL.Path, ".git/") {
		g.serveGit(w, r)
		return
	}
	http.NotFound(w, r)
}

// serveGit serves git's smart HTTP protocol with git http-backend, behind
// HTTP Basic auth whose password is a token.
func (g *GitHub) serveGit(w http.ResponseWriter, r *http.Request) {
	repoPath, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), ".git/")
	push := rest == "git-receive-pack" || r.URL.Query().Get("service") == "git-receive-pack"
	g.mu.Lock()
	g.requests["GIT "+rest]++
	if h := r.Header.Get("Authorization"); h != "" {
		g.auths = append(g.auths, h)
	}
	_, pass, hasAuth := r.BasicAuth()
	readOnly, known := g.tokens[pass]
	repo, exists := g.repos[repoPath]
	archived := exists && repo.archived
	anonymousRead := !hasAuth && !push && exists && repo.public
	g.mu.Unlock()
	if (!hasAuth || !known) && !anonymousRead {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "remote: Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
		return
	}
	if !exists {
		http.Error(w, "remote: Repository not found.", http.StatusNotFound)
		return
	}
	if push && (readOnly || archived) {
		http.Error(w, fmt.Sprintf("remote: Permission to %s.git denied to %s.", repoPath, g.Login), http.StatusForbidden)
		return
	}
	if r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody {
		// git sends packs over http.postBuffer chunked, and net/http/cgi
		// refuses chunked bodies: spool it to learn its length.
		spool, err := os.CreateTemp(g.tmp, "push-*")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer os.Remove(spool.Name())
		defer spool.Close()
		n, err := io.Copy(spool, r.Body)
		if err == nil {
			_, err = spool.Seek(0, io.SeekStart)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r = r.Clone(r.Context())
		r.Body, r.ContentLength, r.TransferEncoding = spool, n, nil
	}
	g.cgi.ServeHTTP(w, r)
}

// ghReq is one authenticated REST request, with its repository.
type ghReq struct {
	r        *http.Request
	ctx      context.Context
	repo     *ghRepo
	readOnly bool
}

// ghList is a JSON array the route wrapper paginates.
type ghList []any

// ghHandler answers a REST request with a status and a JSON body (nil for
// none). It runs with g.mu held.
type ghHandler func(q *ghReq) (int, any)

func (g *GitHub) routes() {
	g.route("GET /repos/{owner}/{repo}", g.getRepo)
	g.route("GET /repos/{owner}/{repo}/pulls", g.listPulls)
	g.route("POST /repos/{owner}/{repo}/pulls", g.createPull)
	g.route("GET /repos/{owner}/{repo}/pulls/{number}", g.getPull)
	g.route("PATCH /repos/{owner}/{repo}/pulls/{number}", g.editPull)
	g.route("GET /repos/{owner}/{repo}/pulls/{number}/merge", g.getMerged)
	g.route("PUT /repos/{owner}/{repo}/pulls/{number}/merge", g.mergePull)
	g.route("GET /repos/{owner}/{repo}/pulls/{number}/reviews", g.listReviews)
	g.route("POST /repos/{owner}/{repo}/pulls/{number}/reviews", g.createReview)
	g.route("GET /repos/{owner}/{repo}/pulls/{number}/comments", g.listComments)
	g.route("GET /repos/{owner}/{repo}/git/ref/heads/{branch...}", g.getRef)
	g.route("GET /repos/{owner}/{repo}/git/refs/heads/{branch...}", g.getRef)
	g.route("DELETE /repos/{owner}/{repo}/git/refs/heads/{branch...}", g.deleteRef)
	g.api.HandleFunc("POST /api/graphql", g.graphql)
	g.api.HandleFunc("/api/v3/", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.requests["unknown "+r.Method+" "+strings.TrimPrefix(r.URL.Path, "/api/v3")]++
		g.mu.Unlock()
		g.write(w, r, http.StatusNotFound, ghMessage("Not Found"))
	})
}

// route registers h for pattern (without /api/v3) behind GitHub's checks:
// faults, token, repository, then write access.
func (g *GitHub) route(pattern string, h ghHandler) {
	method, path, _ := strings.Cut(pattern, " ")
	g.api.HandleFunc(method+" /api/v3"+path, func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.requests[pattern]++
		auth := r.Header.Get("Authorization")
		if auth != "" {
			g.auths = append(g.auths, auth)
		}
		if len(g.faults) > 0 {
			f := g.faults[0]
			g.faults = g.faults[1:]
			if f.rateLimit {
				w.Header().Set("X-RateLimit-Limit", "5000")
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Used", "5000")
				w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
				w.Header().Set("X-RateLimit-Resource", "core")
				g.write(w, r, f.status, ghError("API rate limit exceeded for user ID 1.", f.status, ghDocs+"/overview/rate-limits-for-the-rest-api"))
				return
			}
			g.write(w, r, f.status, ghError(http.StatusText(f.status), f.status, ""))
			return
		}
		token, ok := bearer(auth)
		if !ok {
			g.write(w, r, http.StatusUnauthorized, ghError("Requires authentication", 401, ghDocs))
			return
		}
		readOnly, known := g.tokens[token]
		if !known {
			g.write(w, r, http.StatusUnauthorized, ghError("Bad credentials", 401, ghDocs))
			return
		}
		q := &ghReq{r: r, ctx: r.Context(), readOnly: readOnly}
		repo, ok := g.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
		if !ok {
			g.write(w, r, http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/repos/repos#get-a-repository"))
			return
		}
		q.repo = repo
		if err := g.sync(q.ctx, repo); err != nil {
			g.write(w, r, http.StatusInternalServerError, ghError("fake: "+err.Error(), 500, ""))
			return
		}
		if method != http.MethodGet {
			if readOnly {
				g.write(w, r, http.StatusForbidden, ghError("Resource not accessible by personal access token", 403, ghDocs))
				return
			}
			if repo.archived {
				g.write(w, r, http.StatusForbidden, ghError("Repository was archived so is read-only.", 403, ghDocs))
				return
			}
		}
		status, body := h(q)
		g.write(w, r, status, body)
	})
}

// graphql answers GitHub's GraphQL API (Enterprise's /api/graphql), as far
// as Fetch uses it: the markPullRequestReadyForReview mutation, by the pull
// request's node id. Like GitHub, it answers 200 with "errors" for what it
// cannot do, and 401 without a valid token.
func (g *GitHub) graphql(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests["POST /graphql"]++
	token, ok := bearer(r.Header.Get("Authorization"))
	readOnly, known := g.tokens[token]
	if !ok || !known {
		g.write(w, r, http.StatusUnauthorized, ghMessage("Bad credentials"))
		return
	}
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		g.write(w, r, http.StatusBadRequest, ghMessage("Problems parsing JSON"))
		return
	}
	fail := func(msg string) {
		g.write(w, r, http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{"message": msg}}})
	}
	if !strings.Contains(in.Query, "markPullRequestReadyForReview") {
		fail("fake: only markPullRequestReadyForReview is supported")
		return
	}
	id, _ := in.Variables["id"].(string)
	for _, repo := range g.repos {
		for _, p := range repo.pulls {
			if fmt.Sprintf("PR_%d", p.id) != id {
				continue
			}
			if readOnly {
				fail("Resource not accessible by personal access token")
				return
			}
			if p.state != "open" {
				fail("Pull request is closed")
				return
			}
			p.draft, p.updated = false, time.Now().UTC()
			g.write(w, r, http.StatusOK, map[string]any{"data": map[string]any{
				"markPullRequestReadyForReview": map[string]any{"pullRequest": map[string]any{"isDraft": false, "number": p.number}},
			}})
			return
		}
	}
	fail(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
}

// bearer reads a token from "Bearer X" or "token X".
func bearer(auth string) (string, bool) {
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || tok == "" {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "bearer", "token":
		return tok, true
	}
	return "", false
}

func ghMessage(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": ghDocs}
}

func ghError(msg string, status int, docs string) map[string]any {
	m := map[string]any{"message": msg, "status": strconv.Itoa(status)}
	if docs != "" {
		m["documentation_url"] = docs
	}
	return m
}

// ghValidation is GitHub's 422 body.
func ghValidation(errs ...map[string]any) (int, any) {
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "errors": list,
		"documentation_url": ghDocs + "/pulls/pulls#create-a-pull-request", "status": "422",
	}
}

// write sends body as JSON with GitHub's headers, paginating a ghList and
// answering a GET with an ETag, or 304 when If-None-Match matches it. The
// caller holds g.mu.
func (g *GitHub) write(w http.ResponseWriter, r *http.Request, status int, body any) {
	h := w.Header()
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("FAKE:%d", len(g.auths)))
	if h.Get("X-RateLimit-Remaining") == "" {
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "4999")
		h.Set("X-RateLimit-Used", "1")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
	}
	if list, ok := body.(ghList); ok {
		body = g.paginate(w, r, list)
	}
	if body == nil {
		w.WriteHeader(status)
		return
	}
	data, err := json.Marshal(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if r.Method == http.MethodGet && status == http.StatusOK {
		sum := sha256.Sum256(data)
		etag := `W/"` + hex.EncodeToString(sum[:]) + `"`
		h.Set("ETag", etag)
		h.Set("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
		if etagMatch(r.Header.Get("If-None-Match"), etag) {
			g.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// etagMatch is If-None-Match's weak comparison.
func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for cand := range strings.SplitSeq(header, ",") {
		cand = strings.TrimSpace(cand)
		if cand == "*" || strings.TrimPrefix(cand, "W/") == want {
			return true
		}
	}
	return false
}

// paginate returns the page of list that per_page and page ask for and
// sets GitHub's Link header.
func (g *GitHub) paginate(w http.ResponseWriter, r *http.Request, list ghList) ghList {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = ghPerPage
	}
	per = min(per, ghMaxPerPage)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (len(list)+per-1)/per)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		v := u.Query()
		v.Set("per_page", strconv.Itoa(per))
		v.Set("page", strconv.Itoa(p))
		u.RawQuery = v.Encode()
		return fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := min((page-1)*per, len(list))
	end := min(start+per, len(list))
	out := list[start:end]
	if out == nil {
		out = ghList{}
	}
	return out
}

func (g *GitHub) userJSON(login string) map[string]any {
	id, ok := g.users[login]
	if !ok {
		g.nextID++
		id = g.nextID
		g.users[login] = id
	}
	return map[string]any{
		"login": login, "id": id, "node_id": fmt.Sprintf("U_%d", id), "type": "User", "site_admin": false,
		"html_url": g.URL + login, "url": g.APIURL + "users/" + login,
	}
}

func ghTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(ghTimeLayout)
}

func (g *GitHub) repoJSON(r *ghRepo, push bool) map[string]any {
	full := r.owner + "/" + r.name
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("R_%d", r.id), "name": r.name, "full_name": full,
		"owner": g.userJSON(r.owner), "private": true, "visibility": "private", "fork": false,
		"html_url": g.URL + full, "url": g.APIURL + "repos/" + full,
		"clone_url": g.cloneURL(r.owner, r.name), "git_url": "git://127.0.0.1/" + full + ".git",
		"ssh_url": "git@127.0.0.1:" + full + ".git", "default_branch": r.defaultBranch,
		"archived": r.archived, "disabled": false,
		"created_at": ghTime(r.created), "updated_at": ghTime(r.created),
		"allow_merge_commit": true, "allow_squash_merge": true, "allow_rebase_merge": false,
		"permissions": map[string]bool{"admin": push, "maintain": push, "push": push, "triage": push, "pull": true},
	}
}

// pullJSON is a pull request as GET pulls/{n} shows it; full=false gives
// the list's shorter form (no merged, mergeable, counts).
func (g *GitHub) pullJSON(r *ghRepo, p *ghPull, full bool) map[string]any {
	repoURL := g.APIURL + "repos/" + r.owner + "/" + r.name
	html := g.URL + r.owner + "/" + r.name + "/pull/" + strconv.Itoa(p.number)
	branch := func(ref, sha string) map[string]any {
		return map[string]any{
			"label": r.owner + ":" + ref, "ref": ref, "sha": sha,
			"user": g.userJSON(r.owner), "repo": g.repoJSON(r, true),
		}
	}
	m := map[string]any{
		"id": p.id, "node_id": fmt.Sprintf("PR_%d", p.id), "number": p.number,
		"url": repoURL + "/pulls/" + strconv.Itoa(p.number), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch",
		"state": p.state, "locked": false, "title": p.title, "body": p.body,
		"user": g.userJSON(p.user), "draft": p.draft,
		"created_at": ghTime(p.created), "updated_at": ghTime(p.updated),
		"closed_at": ghTime(p.closed), "merged_at": ghTime(p.mergedAt),
		"merge_commit_sha": nilIfEmpty(p.mergeCommitSHA),
		"head":             branch(p.head, p.headSHA), "base": branch(p.base, p.baseSHA),
		"author_association": "OWNER",
	}
	if full {
		m["merged"] = p.merged
		m["mergeable"] = p.mergeable
		state := "unknown"
		if p.mergeable != nil {
			state = map[bool]string{true: "clean", false: "dirty"}[*p.mergeable]
		}
		m["mergeable_state"] = state
		m["merged_by"] = nil
		if p.mergedBy != "" {
			m["merged_by"] = g.userJSON(p.mergedBy)
		}
		m["comments"] = 0
		m["review_comments"] = len(p.comments)
		m["maintainer_can_modify"] = p.maintainerCanModify
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (g *GitHub) getRepo(q *ghReq) (int, any) {
	return http.StatusOK, g.repoJSON(q.repo, !q.readOnly && !q.repo.archived)
}

func (g *GitHub) listPulls(q *ghReq) (int, any) {
	v := q.r.URL.Query()
	state := v.Get("state")
	if state == "" {
		state = "open"
	}
	var headOwner, headRef string
	if head := v.Get("head"); head != "" {
		var ok bool
		headOwner, headRef, ok = strings.Cut(head, ":")
		if !ok {
			headOwner, headRef = q.repo.owner, head
		}
	}
	pulls := slices.Clone(q.repo.pulls)
	if v.Get("direction") != "asc" {
		slices.Reverse(pulls)
	}
	list := ghList{}
	for _, p := range pulls {
		if state != "all" && p.state != state {
			continue
		}
		if headRef != "" && (headOwner != q.repo.owner || p.head != headRef) {
			continue
		}
		if base := v.Get("base"); base != "" && p.base != base {
			continue
		}
		list = append(list, g.pullJSON(q.repo, p, false))
	}
	return http.StatusOK, list
}

func (g *GitHub) createPull(q *ghReq) (int, any) {
	var in struct {
		Title               string `json:"title"`
		Head                string `json:"head"`
		Base                string `json:"base"`
		Body                string `json:"body"`
		Draft               bool   `json:"draft"`
		MaintainerCanModify *bool  `json:"maintainer_can_modify"`
	}
	if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
		return http.StatusBadRequest, ghError("Problems parsing JSON", 400, ghDocs)
	}
	r := q.repo
	if in.Title == "" {
		return ghValidation(map[string]any{"resource": "PullRequest", "field": "title", "code": "missing_field"})
	}
	head := in.Head
	if owner, ref, ok := strings.Cut(head, ":"); ok {
		if owner != r.owner {
			return ghValidation(map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
		}
		head = ref
	}
	baseSHA, ok := g.refSHA(q.ctx, r.dir, in.Base)
	if in.Base == "" || !ok {
		return ghValidation(map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
	}
	headSHA, ok := g.refSHA(q.ctx, r.dir, head)
	if head == "" || !ok {
		return ghValidation(map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
	}
	for _, p := range r.pulls {
		if p.state == "open" && p.head == head && p.base == in.Base {
			return ghValidation(map[string]any{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", r.owner, head)})
		}
	}
	if g.isAncestor(q.ctx, r.dir, headSHA, baseSHA) {
		return ghValidation(map[string]any{"resource": "PullRequest", "code": "custom",
			"message": fmt.Sprintf("No commits between %s and %s", in.Base, head)})
	}
	g.nextID++
	now := time.Now().UTC()
	p := &ghPull{
		id: g.nextID, number: r.nextNumber, title: in.Title, body: in.Body, user: g.Login,
		head: head, base: in.Base, state: "open", headSHA: headSHA, baseSHA: baseSHA,
		created: now, updated: now, draft: in.Draft,
		maintainerCanModify: in.MaintainerCanModify == nil || *in.MaintainerCanModify,
	}
	r.nextNumber++
	r.pulls = append(r.pulls, p)
	if err := g.sync(q.ctx, r); err != nil {
		return http.StatusInternalServerError, ghError("fake: "+err.Error(), 500, "")
	}
	return http.StatusCreated, g.pullJSON(r, p, true)
}

// pathPull finds the {number} of the request.
func pathPull(q *ghReq) *ghPull {
	n, err := strconv.Atoi(q.r.PathValue("number"))
	if err != nil {
		return nil
	}
	return findPull(q.repo, n)
}

func (g *GitHub) getPull(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/pulls/pulls#get-a-pull-request")
	}
	return http.StatusOK, g.pullJSON(q.repo, p, true)
}

func (g *GitHub) editPull(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/pulls/pulls#update-a-pull-request")
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
		return http.StatusBadRequest, ghError("Problems parsing JSON", 400, ghDocs)
	}
	now := time.Now().UTC()
	if in.Title != nil {
		p.title = *in.Title
	}
	if in.Body != nil {
		p.body = *in.Body
	}
	if in.Base != nil && *in.Base != p.base {
		if p.state != "open" {
			return ghValidation(map[string]any{"resource": "PullRequest", "code": "custom", "message": "Cannot change base branch of closed pull request."})
		}
		sha, ok := g.refSHA(q.ctx, q.repo.dir, *in.Base)
		if !ok {
			return ghValidation(map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
		}
		p.base, p.baseSHA = *in.Base, sha
	}
	if in.State != nil {
		switch *in.State {
		case "closed":
			if p.state == "open" {
				p.state, p.closed = "closed", now
			}
		case "open":
			if p.state == "closed" {
				if p.merged {
					return ghValidation(map[string]any{"resource": "PullRequest", "code": "custom", "message": "Cannot reopen a merged pull request."})
				}
				if _, ok := g.refSHA(q.ctx, q.repo.dir, p.head); !ok {
					return ghValidation(map[string]any{"resource": "PullRequest", "field": "state", "code": "invalid"})
				}
				p.state, p.closed = "open", time.Time{}
			}
		default:
			return ghValidation(map[string]any{"resource": "PullRequest", "field": "state", "code": "invalid"})
		}
	}
	p.updated = now
	if err := g.sync(q.ctx, q.repo); err != nil {
		return http.StatusInternalServerError, ghError("fake: "+err.Error(), 500, "")
	}
	return http.StatusOK, g.pullJSON(q.repo, p, true)
}

func (g *GitHub) getMerged(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil || !p.merged {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs)
	}
	return http.StatusNoContent, nil
}

func (g *GitHub) mergePull(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/pulls/pulls#merge-a-pull-request")
	}
	var in struct {
		CommitTitle   string  `json:"commit_title"`
		CommitMessage *string `json:"commit_message"`
		SHA           string  `json:"sha"`
		MergeMethod   string  `json:"merge_method"`
	}
	if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil && !errors.Is(err, io.EOF) {
		return http.StatusBadRequest, ghError("Problems parsing JSON", 400, ghDocs)
	}
	if in.SHA != "" && in.SHA != p.headSHA {
		return http.StatusConflict, ghError("Head branch was modified. Review and try the merge again.", 409, ghDocs+"/pulls/pulls#merge-a-pull-request")
	}
	if p.draft && p.state == "open" {
		// As GitHub: a draft merges only once it is marked ready.
		return http.StatusMethodNotAllowed, ghError("Pull Request is still a draft", 405, ghDocs+"/pulls/pulls#merge-a-pull-request")
	}
	msg := ""
	if in.CommitMessage != nil {
		msg = *in.CommitMessage
	}
	status, text, sha := g.merge(q.ctx, q.repo, p, in.MergeMethod, in.CommitTitle, msg, g.Login)
	if status != http.StatusOK {
		if status == http.StatusUnprocessableEntity {
			return ghValidation(map[string]any{"resource": "PullRequest", "field": "merge_method", "code": "invalid"})
		}
		return status, ghError(text, status, ghDocs+"/pulls/pulls#merge-a-pull-request")
	}
	return http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": text}
}

// merge merges p into its base with method ("" is "merge") and returns
// GitHub's status, message and the new commit. The caller holds g.mu.
func (g *GitHub) merge(ctx context.Context, r *ghRepo, p *ghPull, method, title, message, by string) (int, string, string) {
	if p.state != "open" {
		return http.StatusMethodNotAllowed, "Pull Request is not mergeable", ""
	}
	switch method {
	case "", "merge", "squash":
	case "rebase":
		return http.StatusMethodNotAllowed, "Rebase merges are not allowed on this repository.", ""
	default:
		return http.StatusUnprocessableEntity, "", ""
	}
	base, ok := g.refSHA(ctx, r.dir, p.base)
	if !ok {
		return http.StatusMethodNotAllowed, "Base branch was deleted", ""
	}
	tree, clean, err := g.mergeTree(ctx, r.dir, base, p.headSHA)
	if err != nil {
		return http.StatusInternalServerError, "fake: " + err.Error(), ""
	}
	if !clean {
		return http.StatusMethodNotAllowed, "Pull Request is not mergeable", ""
	}
	args := []string{"commit-tree", tree, "-p", base}
	if method == "squash" {
		if title == "" {
			title = fmt.Sprintf("%s (#%d)", p.title, p.number)
		}
	} else {
		args = append(args, "-p", p.headSHA)
		if title == "" {
			title = fmt.Sprintf("Merge pull request #%d from %s/%s", p.number, r.owner, p.head)
		}
		if message == "" {
			message = p.title
		}
	}
	full := title
	if message != "" {
		full += "\n\n" + message
	}
	args = append(args, "-m", full)
	env := []string{"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com",
		"GIT_AUTHOR_NAME=" + by, "GIT_AUTHOR_EMAIL=" + by + "@users.noreply.github.com"}
	out, err := g.gitRun(ctx, r.dir, env, args...)
	if err != nil {
		return http.StatusInternalServerError, "fake: " + err.Error(), ""
	}
	sha := strings.TrimSpace(out)
	if _, err := g.gitRun(ctx, r.dir, nil, "update-ref", "refs/heads/"+p.base, sha, base); err != nil {
		return http.StatusConflict, "Base branch was modified. Review and try the merge again.", ""
	}
	now := time.Now().UTC()
	p.state, p.merged, p.mergedBy = "closed", true, by
	p.closed, p.mergedAt, p.updated = now, now, now
	p.mergeCommitSHA, p.baseSHA = sha, base
	p.mergeable = nil
	return http.StatusOK, "Pull Request successfully merged", sha
}

func (g *GitHub) listReviews(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs)
	}
	list := ghList{}
	for _, rv := range p.reviews {
		list = append(list, g.reviewJSON(q.repo, p, rv))
	}
	return http.StatusOK, list
}

// reviewJSON is a review as GitHub shows it (list, create).
func (g *GitHub) reviewJSON(r *ghRepo, p *ghPull, rv ghReview) map[string]any {
	full := r.owner + "/" + r.name
	return map[string]any{
		"id": rv.id, "node_id": fmt.Sprintf("PRR_%d", rv.id), "user": g.userJSON(rv.user),
		"body": rv.body, "state": rv.state, "commit_id": rv.commit,
		"submitted_at":       ghTime(rv.at),
		"html_url":           fmt.Sprintf("%s%s/pull/%d#pullrequestreview-%d", g.URL, full, p.number, rv.id),
		"pull_request_url":   fmt.Sprintf("%srepos/%s/pulls/%d", g.APIURL, full, p.number),
		"author_association": "COLLABORATOR",
	}
}

// createReview is POST pulls/{n}/reviews as GitHub answers it: event
// APPROVE, REQUEST_CHANGES or COMMENT submits the review at once (state
// APPROVED, CHANGES_REQUESTED, COMMENTED); no event leaves it PENDING (one
// per user and pull request). The author of the pull request (every
// token's user here) may not approve it or request changes on it: 422
// "Can not approve your own pull request" and "Can not request changes on
// your own pull request". REQUEST_CHANGES and COMMENT need a body (the
// first message is GitHub's; the second's wording is the fake's). A
// commit_id that is not a commit of the repository is refused too. Line
// comments (comments[]) are not modelled: a request with them is 422.
func (g *GitHub) createReview(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/pulls/reviews#create-a-review-for-a-pull-request")
	}
	var in struct {
		CommitID string            `json:"commit_id"`
		Body     string            `json:"body"`
		Event    string            `json:"event"`
		Comments []json.RawMessage `json:"comments"`
	}
	if err := json.NewDecoder(q.r.Body).Decode(&in); err != nil {
		return http.StatusBadRequest, ghError("Problems parsing JSON", 400, ghDocs)
	}
	unprocessable := func(msg string) (int, any) {
		return http.StatusUnprocessableEntity, map[string]any{"message": "Unprocessable Entity", "errors": []string{msg},
			"documentation_url": ghDocs + "/pulls/reviews#create-a-review-for-a-pull-request", "status": "422"}
	}
	state := ""
	switch in.Event {
	case "APPROVE":
		state = "APPROVED"
		if p.user == g.Login {
			return unprocessable("Can not approve your own pull request")
		}
	case "REQUEST_CHANGES":
		state = "CHANGES_REQUESTED"
		if p.user == g.Login {
			return unprocessable("Can not request changes on your own pull request")
		}
		if strings.TrimSpace(in.Body) == "" {
			return unprocessable("You need to leave a comment indicating the requested changes.")
		}
	case "COMMENT":
		state = "COMMENTED"
		if strings.TrimSpace(in.Body) == "" {
			return unprocessable("You need to leave a comment.")
		}
	case "":
		state = "PENDING"
		for _, rv := range p.reviews {
			if rv.state == "PENDING" && rv.user == g.Login {
				return unprocessable("User can only have one pending review per pull request")
			}
		}
	default:
		return ghValidation(map[string]any{"resource": "PullRequestReview", "field": "event", "code": "invalid"})
	}
	if len(in.Comments) > 0 {
		return unprocessable("fake: review comments are not modelled")
	}
	commit := p.headSHA
	if in.CommitID != "" {
		if _, err := g.gitRun(q.ctx, q.repo.dir, nil, "cat-file", "-e", in.CommitID+"^{commit}"); err != nil {
			return unprocessable("Commit " + in.CommitID + " is not part of the pull request")
		}
		commit = in.CommitID
	}
	g.nextID++
	now := time.Now().UTC()
	rv := ghReview{id: g.nextID, user: g.Login, state: state, body: in.Body, commit: commit}
	if state != "PENDING" {
		rv.at = now
		p.updated = now
	}
	p.reviews = append(p.reviews, rv)
	return http.StatusOK, g.reviewJSON(q.repo, p, rv)
}

// GitHubReview is a review of a pull request of the fake.
type GitHubReview struct {
	User, State, Body, Commit string
}

// Reviews returns pull request number's reviews, oldest first.
func (g *GitHub) Reviews(repo string, number int) []GitHubReview {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pull(g.repo(repo), number)
	var out []GitHubReview
	for _, rv := range p.reviews {
		out = append(out, GitHubReview{User: rv.user, State: rv.state, Body: rv.body, Commit: rv.commit})
	}
	return out
}

func (g *GitHub) listComments(q *ghReq) (int, any) {
	p := pathPull(q)
	if p == nil {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs)
	}
	full := q.repo.owner + "/" + q.repo.name
	list := ghList{}
	for _, c := range p.comments {
		list = append(list, map[string]any{
			"id": c.id, "node_id": fmt.Sprintf("PRRC_%d", c.id), "pull_request_review_id": c.reviewID,
			"path": c.path, "line": c.line, "original_line": c.line, "side": "RIGHT",
			"start_line": nil, "position": c.line, "original_position": c.line,
			"commit_id": c.commit, "original_commit_id": c.commit, "diff_hunk": "@@",
			"user": g.userJSON(c.user), "body": c.body, "subject_type": "line",
			"created_at": ghTime(c.at), "updated_at": ghTime(c.at),
			"url":                fmt.Sprintf("%srepos/%s/pulls/comments/%d", g.APIURL, full, c.id),
			"html_url":           fmt.Sprintf("%s%s/pull/%d#discussion_r%d", g.URL, full, p.number, c.id),
			"pull_request_url":   fmt.Sprintf("%srepos/%s/pulls/%d", g.APIURL, full, p.number),
			"author_association": "COLLABORATOR",
		})
	}
	return http.StatusOK, list
}

func (g *GitHub) getRef(q *ghReq) (int, any) {
	branch := q.r.PathValue("branch")
	sha, ok := g.refSHA(q.ctx, q.repo.dir, branch)
	if !ok {
		return http.StatusNotFound, ghError("Not Found", 404, ghDocs+"/git/refs#get-a-reference")
	}
	u := g.APIURL + "repos/" + q.repo.owner + "/" + q.repo.name
	return http.StatusOK, map[string]any{
		"ref": "refs/heads/" + branch, "node_id": "REF_" + sha[:8],
		"url":    u + "/git/refs/heads/" + branch,
		"object": map[string]any{"sha": sha, "type": "commit", "url": u + "/git/commits/" + sha},
	}
}

func (g *GitHub) deleteRef(q *ghReq) (int, any) {
	branch := q.r.PathValue("branch")
	sha, ok := g.refSHA(q.ctx, q.repo.dir, branch)
	if !ok {
		return http.StatusUnprocessableEntity, ghError("Reference does not exist", 422, ghDocs+"/git/refs#delete-a-reference")
	}
	if q.repo.protected[branch] {
		return http.StatusUnprocessableEntity, ghError("Cannot delete this protected branch", 422, ghDocs+"/git/refs#delete-a-reference")
	}
	if _, err := g.gitRun(q.ctx, q.repo.dir, nil, "update-ref", "-d", "refs/heads/"+branch, sha); err != nil {
		return http.StatusInternalServerError, ghError("fake: "+err.Error(), 500, "")
	}
	if err := g.sync(q.ctx, q.repo); err != nil {
		return http.StatusInternalServerError, ghError("fake: "+err.Error(), 500, "")
	}
	return http.StatusNoContent, nil
}

// sync brings r's open pull requests up to date with its branches, as
// GitHub does after a push: a new head commit, a deleted head (the pull
// request closes), head commits that reached the base by a push (it is
// merged) and mergeability. The caller holds g.mu.
func (g *GitHub) sync(ctx context.Context, r *ghRepo) error {
	for _, p := range r.pulls {
		if p.state != "open" {
			continue
		}
		now := time.Now().UTC()
		head, ok := g.refSHA(ctx, r.dir, p.head)
		if !ok {
			p.state, p.closed, p.updated, p.mergeable = "closed", now, now, nil
			continue
		}
		if head != p.headSHA {
			p.headSHA, p.updated = head, now
		}
		base, ok := g.refSHA(ctx, r.dir, p.base)
		if !ok {
			p.state, p.closed, p.updated, p.mergeable = "closed", now, now, nil
			continue
		}
		p.baseSHA = base
		if g.isAncestor(ctx, r.dir, head, base) {
			p.state, p.merged, p.mergedBy = "closed", true, r.owner
			p.closed, p.mergedAt, p.updated = now, now, now
			p.mergeCommitSHA, p.mergeable = head, nil
			continue
		}
		_, clean, err := g.mergeTree(ctx, r.dir, base, head)
		if err != nil {
			return err
		}
		if p.mergeable == nil || *p.mergeable != clean {
			p.mergeable = &clean
		}
	}
	return nil
}

// gitRun runs git in dir ("" for none) with the fake's identity and
// isolation and returns its standard output.
func (g *GitHub) gitRun(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	out, _, err := g.gitExit(ctx, dir, env, args...)
	return out, err
}

// gitExit is gitRun that also returns the exit code of a git that ran.
func (g *GitHub) gitExit(ctx context.Context, dir string, env []string, args ...string) (string, int, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), gitIsolation...)
	cmd.Env = append(cmd.Env, "HOME="+g.tmp,
		"GIT_AUTHOR_NAME=Upstream", "GIT_AUTHOR_EMAIL=upstream@example.com",
		"GIT_COMMITTER_NAME=Upstream", "GIT_COMMITTER_EMAIL=upstream@example.com")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), exit.ExitCode(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return "", -1, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), 0, nil
}

// refSHA resolves branch in the bare repository dir.
func (g *GitHub) refSHA(ctx context.Context, dir, branch string) (string, bool) {
	if branch == "" {
		return "", false
	}
	out, err := g.gitRun(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(out), true
}

func (g *GitHub) isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := g.gitRun(ctx, dir, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// mergeTree merges head into base without a work tree and returns the
// merged tree and whether it merged without conflicts.
func (g *GitHub) mergeTree(ctx context.Context, dir, base, head string) (string, bool, error) {
	out, code, err := g.gitExit(ctx, dir, nil, "merge-tree", "--write-tree", "--no-messages", base, head)
	switch {
	case err == nil:
		return strings.TrimSpace(out), true, nil
	case code == 1:
		return "", false, nil
	default:
		return "", false, err
	}
}

// commitFiles commits files on top of parent ("" for a root commit) and
// points branch at the commit. The caller holds g.mu.
func (g *GitHub) commitFiles(ctx context.Context, dir, branch, parent string, files map[string]string, message string) (string, error) {
	g.scratch++
	index := filepath.Join(g.tmp, fmt.Sprintf("index-%d", g.scratch))
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if parent != "" {
		if _, err := g.gitRun(ctx, dir, env, "read-tree", parent); err != nil {
			return "", err
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		cmd := []string{"hash-object", "-w", "--stdin"}
		blob, err := g.gitStdin(ctx, dir, files[p], cmd...)
		if err != nil {
			return "", err
		}
		if _, err := g.gitRun(ctx, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(blob)+","+p); err != nil {
			return "", err
		}
	}
	tree, err := g.gitRun(ctx, dir, env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := g.gitRun(ctx, dir, nil, args...)
	if err != nil {
		return "", err
	}
	sha := strings.TrimSpace(out)
	old, ok := g.refSHA(ctx, dir, branch)
	if !ok {
		old = strings.Repeat("0", 40) // the branch must not exist yet
	}
	if _, err := g.gitRun(ctx, dir, nil, "update-ref", "refs/heads/"+branch, sha, old); err != nil {
		return "", err
	}
	return sha, nil
}

// gitStdin runs git in dir with stdin.
func (g *GitHub) gitStdin(ctx context.Context, dir, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), gitIsolation...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// GitHubBasicAuth is the value of an Authorization header that makes git
// authenticate with token over HTTP, as in
// git -c http.extraHeader="Authorization: Basic ..." push.
func GitHubBasicAuth(token string) string {
	return "Basic " + basicAuth("x-access-token", token)
}

func basicAuth(user, pass string) string {
	req := &http.Request{Header: http.Header{}}
	req.SetBasicAuth(user, pass)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}
