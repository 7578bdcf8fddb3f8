package github_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/github"
	"github.com/fetch-dev/fetch/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// world is a fake GitHub with one repository, acme/widget, a task branch
// fetch/task-1 with one commit on it, and a client with the full token.
type world struct {
	gh     *testkit.GitHub
	repo   testkit.GitHubRepo
	client *github.Client
}

const (
	owner  = "acme"
	name   = "widget"
	branch = "fetch/task-1"
)

func newWorld(t *testing.T) world {
	t.Helper()
	gh := testkit.NewGitHub(t)
	repo := gh.AddRepo(owner, name, map[string]string{"README.md": "# widget\n", "main.go": "package main\n"})
	gh.Commit(repo.FullName, branch, "work.txt", "done\n", "work")
	return world{gh: gh, repo: repo, client: newClient(t, gh, gh.Token)}
}

func newClient(t *testing.T, gh *testkit.GitHub, token string) *github.Client {
	t.Helper()
	c, err := github.New(github.Config{URL: gh.APIURL, Token: token, HTTPClient: httpClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// httpClient is a client whose idle connections close with the test.
func httpClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (w world) open(t *testing.T) github.PR {
	t.Helper()
	pr, _, err := w.client.OpenPR(t.Context(), owner, name, github.NewPR{Title: "Task 1", Body: "Does the work.", Head: branch, Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func TestRepo(t *testing.T) {
	w := newWorld(t)
	got, err := w.client.Repo(t.Context(), owner, name)
	if err != nil {
		t.Fatal(err)
	}
	want := github.Repo{Owner: owner, Name: name, DefaultBranch: "main", CloneURL: w.repo.CloneURL, Push: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Repo (-want +got):\n%s", diff)
	}
	if err := got.CanPush(); err != nil {
		t.Errorf("CanPush = %v", err)
	}

	ro, err := newClient(t, w.gh, w.gh.NewToken(true)).Repo(t.Context(), owner, name)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Push {
		t.Error("a read-only token may push")
	}
	if err := ro.CanPush(); !errors.Is(err, github.ErrPermission) {
		t.Errorf("CanPush with a read-only token = %v, want ErrPermission", err)
	}
	w.gh.Archive(w.repo.FullName)
	archived, err := w.client.Repo(t.Context(), owner, name)
	if err != nil {
		t.Fatal(err)
	}
	if !archived.Archived || !errors.Is(archived.CanPush(), github.ErrPermission) {
		t.Errorf("archived repo: %+v, CanPush = %v", archived, archived.CanPush())
	}
}

func TestOpenPRIdempotent(t *testing.T) {
	w := newWorld(t)
	first, created, err := w.client.OpenPR(t.Context(), owner, name, github.NewPR{Title: "Task 1", Body: "b", Head: branch, Base: "main"})
	if err != nil || !created {
		t.Fatalf("first OpenPR: created=%v err=%v", created, err)
	}
	second, created, err := w.client.OpenPR(t.Context(), owner, name, github.NewPR{Title: "Task 1", Body: "b", Head: branch, Base: "main"})
	if err != nil || created {
		t.Fatalf("second OpenPR: created=%v err=%v", created, err)
	}
	// GitHub's list leaves mergeable out: a found PR has it nil.
	ignoreMergeable := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Mergeable" }, cmp.Ignore())
	if diff := cmp.Diff(first, second, ignoreMergeable); diff != "" {
		t.Errorf("second OpenPR returned another PR (-first +second):\n%s", diff)
	}
	prs := w.gh.PRs(w.repo.FullName)
	if len(prs) != 1 {
		t.Fatalf("fake has %d PRs, want 1: %+v", len(prs), prs)
	}
	want := testkit.GitHubPR{Number: first.Number, Title: "Task 1", Body: "b", Head: branch, Base: "main", State: "open", HeadSHA: w.gh.Tip(w.repo.FullName, branch)}
	if diff := cmp.Diff(want, prs[0]); diff != "" {
		t.Errorf("fake's PR (-want +got):\n%s", diff)
	}
	if first.URL == "" || first.State != github.Open || first.HeadSHA != want.HeadSHA || first.Mergeable == nil || !*first.Mergeable {
		t.Errorf("PR = %+v", first)
	}
	if n := w.gh.Requests("POST /repos/{owner}/{repo}/pulls"); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
	for _, auth := range w.gh.Authorizations() {
		if auth != "Bearer "+w.gh.Token {
			t.Errorf("request authorized with %q, want the Bearer token", auth)
		}
	}
}

// racer is a transport that, before the client's first create, lets
// another client open the same pull request: the create then meets
// GitHub's 422 "A pull request already exists".
type racer struct {
	next http.RoundTripper
	once sync.Once
	race func()
}

func (r *racer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		r.once.Do(r.race)
	}
	return r.next.RoundTrip(req)
}

func TestOpenPRRace(t *testing.T) {
	w := newWorld(t)
	pr := github.NewPR{Title: "Task 1", Head: branch, Base: "main"}
	var winner github.PR
	tr := &racer{next: httpClient(t).Transport, race: func() {
		var err error
		winner, _, err = w.client.OpenPR(context.WithoutCancel(t.Context()), owner, name, pr)
		if err != nil {
			t.Error(err)
		}
	}}
	loser, err := github.New(github.Config{URL: w.gh.APIURL, Token: w.gh.Token, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	got, created, err := loser.OpenPR(t.Context(), owner, name, pr)
	if err != nil {
		t.Fatalf("OpenPR after losing the race: %v", err)
	}
	if created || got.Number != winner.Number {
		t.Errorf("OpenPR = #%d created=%v, want the winner's #%d", got.Number, created, winner.Number)
	}
	if n := len(w.gh.PRs(w.repo.FullName)); n != 1 {
		t.Errorf("%d PRs, want 1", n)
	}
	if n := w.gh.Requests("POST /repos/{owner}/{repo}/pulls"); n != 2 {
		t.Errorf("%d creates, want 2 (the winner's, the loser's 422)", n)
	}
}

func TestOpenPRNoBranch(t *testing.T) {
	w := newWorld(t)
	_, _, err := w.client.OpenPR(t.Context(), owner, name, github.NewPR{Title: "x", Head: "no-such-branch", Base: "main"})
	if !errors.Is(err, github.ErrRejected) {
		t.Errorf("OpenPR from a missing branch = %v, want ErrRejected", err)
	}
}

func TestPRPolling(t *testing.T) {
	w := newWorld(t)
	opened := w.open(t)
	ctx := t.Context()

	first, changed, err := w.client.PR(ctx, owner, name, opened.Number)
	if err != nil || !changed {
		t.Fatalf("first poll: changed=%v err=%v", changed, err)
	}
	if diff := cmp.Diff(opened, first); diff != "" {
		t.Errorf("first poll (-opened +polled):\n%s", diff)
	}
	second, changed, err := w.client.PR(ctx, owner, name, opened.Number)
	if err != nil || changed {
		t.Fatalf("second poll: changed=%v err=%v", changed, err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second poll differs (-first +second):\n%s", diff)
	}
	if n := w.gh.NotModified(); n != 1 {
		t.Errorf("NotModified = %d, want 1", n)
	}

	// A push to the head is a change.
	sha := w.gh.Commit(w.repo.FullName, branch, "more.txt", "more\n", "more work")
	pushed, changed, err := w.client.PR(ctx, owner, name, opened.Number)
	if err != nil || !changed || pushed.HeadSHA != sha {
		t.Fatalf("after a push: %+v changed=%v err=%v, want head %s", pushed, changed, err, sha)
	}

	// So is a merge upstream.
	w.gh.MergePR(w.repo.FullName, opened.Number)
	merged, changed, err := w.client.PR(ctx, owner, name, opened.Number)
	if err != nil || !changed {
		t.Fatalf("after the merge: changed=%v err=%v", changed, err)
	}
	if !merged.Merged || merged.State != github.Closed {
		t.Errorf("after the merge: %+v", merged)
	}
	if _, changed, _ := w.client.PR(ctx, owner, name, opened.Number); changed {
		t.Error("a poll after the merge changed again")
	}
	if n := w.gh.NotModified(); n != 2 {
		t.Errorf("NotModified = %d, want 2", n)
	}
}

func TestMerge(t *testing.T) {
	for _, method := range []github.MergeMethod{github.MergeCommit, github.Squash} {
		t.Run(string(method), func(t *testing.T) {
			w := newWorld(t)
			pr := w.open(t)
			sha, err := w.client.Merge(t.Context(), owner, name, pr.Number, pr.HeadSHA, method)
			if err != nil {
				t.Fatal(err)
			}
			if tip := w.gh.Tip(w.repo.FullName, "main"); tip != sha {
				t.Errorf("main = %s, want the merge %s", tip, sha)
			}
			if got, ok := w.gh.File(w.repo.FullName, "main", "work.txt"); !ok || got != "done\n" {
				t.Errorf("work.txt on main = %q, %v", got, ok)
			}
			got, _, err := w.client.PR(t.Context(), owner, name, pr.Number)
			if err != nil || !got.Merged {
				t.Errorf("PR after merge: %+v, %v", got, err)
			}
		})
	}
	t.Run("moved head", func(t *testing.T) {
		w := newWorld(t)
		pr := w.open(t)
		w.gh.Commit(w.repo.FullName, branch, "late.txt", "late\n", "late push")
		_, err := w.client.Merge(t.Context(), owner, name, pr.Number, pr.HeadSHA, github.MergeCommit)
		if !errors.Is(err, github.ErrRejected) {
			t.Errorf("Merge with a stale sha = %v, want ErrRejected", err)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		w := newWorld(t)
		w.gh.Commit(w.repo.FullName, branch, "main.go", "package main // ours\n", "ours")
		w.gh.Commit(w.repo.FullName, "main", "main.go", "package main // theirs\n", "theirs")
		pr := w.open(t)
		if pr.Mergeable == nil || *pr.Mergeable {
			t.Errorf("Mergeable = %v, want false", pr.Mergeable)
		}
		_, err := w.client.Merge(t.Context(), owner, name, pr.Number, pr.HeadSHA, github.MergeCommit)
		if !errors.Is(err, github.ErrRejected) {
			t.Errorf("Merge with a conflict = %v, want ErrRejected", err)
		}
	})
}

func TestClose(t *testing.T) {
	w := newWorld(t)
	pr := w.open(t)
	for range 2 { // closing a closed PR is fine
		if err := w.client.Close(t.Context(), owner, name, pr.Number); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := w.client.PR(t.Context(), owner, name, pr.Number)
	if err != nil || got.State != github.Closed || got.Merged {
		t.Errorf("after Close: %+v, %v", got, err)
	}
}

func TestDeleteBranch(t *testing.T) {
	w := newWorld(t)
	for range 2 { // deleting a deleted branch is fine
		if err := w.client.DeleteBranch(t.Context(), owner, name, branch); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := w.gh.Branches(w.repo.FullName)[branch]; ok {
		t.Errorf("%s still exists", branch)
	}
	w.gh.Protect(w.repo.FullName, "main")
	if err := w.client.DeleteBranch(t.Context(), owner, name, "main"); !errors.Is(err, github.ErrRejected) {
		t.Errorf("deleting a protected branch = %v, want ErrRejected", err)
	}
}

func TestReviewComments(t *testing.T) {
	w := newWorld(t)
	pr := w.open(t)
	w.gh.AddReview(w.repo.FullName, pr.Number, "alice", "CHANGES_REQUESTED", "Please handle errors.")
	w.gh.AddReview(w.repo.FullName, pr.Number, "bob", "APPROVED", "")
	w.gh.AddReviewComment(w.repo.FullName, pr.Number, "alice", "work.txt", 1, "Say more than done.")
	// Enough comments for GitHub to paginate (100 a page).
	for i := range 120 {
		w.gh.AddReviewComment(w.repo.FullName, pr.Number, "carol", "main.go", i+1, fmt.Sprintf("nit %d", i))
	}
	got, err := w.client.ReviewComments(t.Context(), owner, name, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2+120 {
		t.Fatalf("%d comments, want 122", len(got))
	}
	ignoreAt := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore())
	want := []github.Comment{
		{Kind: github.ReviewBody, State: "CHANGES_REQUESTED", User: "alice", Body: "Please handle errors."},
		{Kind: github.LineComment, User: "alice", Path: "work.txt", Line: 1, Body: "Say more than done."},
		{Kind: github.LineComment, User: "carol", Path: "main.go", Line: 1, Body: "nit 0"},
	}
	if diff := cmp.Diff(want, got[:3], ignoreAt); diff != "" {
		t.Errorf("ReviewComments (-want +got):\n%s", diff)
	}
	if last := got[len(got)-1]; last.Body != "nit 119" || last.Line != 120 {
		t.Errorf("last comment = %+v", last)
	}
	if s := got[1].String(); s != "work.txt:1 (alice): Say more than done." {
		t.Errorf("String = %q", s)
	}
	if n := w.gh.Requests("GET /repos/{owner}/{repo}/pulls/{number}/comments"); n != 2 {
		t.Errorf("%d comment pages read, want 2", n)
	}
}

// CreateReview posts a review as GitHub takes it: a comment review by the
// pull request's author is recorded on the head commit and read back
// with the others; an approval or a request for changes by the author is
// refused (422), as is a comment without a body.
func TestCreateReview(t *testing.T) {
	w := newWorld(t)
	pr := w.open(t)
	head := w.gh.Tip(w.repo.FullName, branch)
	rv, err := w.client.CreateReview(t.Context(), owner, name, pr.Number, head, "**Fetch's review: approve**", github.CommentReview)
	if err != nil {
		t.Fatal(err)
	}
	if rv.ID == 0 || rv.State != "COMMENTED" || !strings.Contains(rv.URL, fmt.Sprintf("/pull/%d#pullrequestreview-", pr.Number)) {
		t.Errorf("CreateReview = %+v", rv)
	}
	got := w.gh.Reviews(w.repo.FullName, pr.Number)
	if len(got) != 1 || got[0].User != w.gh.Login || got[0].Commit != head || got[0].Body != "**Fetch's review: approve**" {
		t.Errorf("reviews on GitHub: %+v", got)
	}
	cs, err := w.client.ReviewComments(t.Context(), owner, name, pr.Number)
	if err != nil || len(cs) != 1 || cs[0].State != "COMMENTED" {
		t.Errorf("ReviewComments = %+v, %v", cs, err)
	}
	for _, tc := range []struct {
		event github.ReviewEvent
		body  string
	}{{github.Approve, "LGTM"}, {github.RequestChanges, "no"}, {github.CommentReview, ""}} {
		if _, err := w.client.CreateReview(t.Context(), owner, name, pr.Number, "", tc.body, tc.event); !errors.Is(err, github.ErrRejected) {
			t.Errorf("CreateReview %s by the author, body %q: %v; want ErrRejected", tc.event, tc.body, err)
		}
	}
	if n := len(w.gh.Reviews(w.repo.FullName, pr.Number)); n != 1 {
		t.Errorf("%d reviews after the refused ones, want 1", n)
	}
}

func TestErrors(t *testing.T) {
	pr := github.NewPR{Title: "Task 1", Head: branch, Base: "main"}
	openPR := func(c *github.Client) error {
		_, _, err := c.OpenPR(t.Context(), owner, name, pr)
		return err
	}
	for _, tc := range []struct {
		name string
		// do runs against a fresh world and returns the error and the token
		// used, which must appear nowhere.
		do   func(t *testing.T, w world) (error, string)
		want error
	}{
		{"no token", func(t *testing.T, w world) (error, string) {
			_, err := github.New(github.Config{URL: w.gh.APIURL})
			return err, ""
		}, github.ErrNoToken},
		{"wrong token", func(t *testing.T, w world) (error, string) {
			tok := "ghp_wrongwrongwrongwrong"
			_, err := newClient(t, w.gh, tok).Repo(t.Context(), owner, name)
			return err, tok
		}, github.ErrAuth},
		{"read-only token", func(t *testing.T, w world) (error, string) {
			tok := w.gh.NewToken(true)
			return openPR(newClient(t, w.gh, tok)), tok
		}, github.ErrPermission},
		{"token made read-only", func(t *testing.T, w world) (error, string) {
			w.gh.SetReadOnly(w.gh.Token, true)
			return w.client.Close(t.Context(), owner, name, 1), w.gh.Token
		}, github.ErrPermission},
		{"unknown repository", func(t *testing.T, w world) (error, string) {
			_, err := w.client.Repo(t.Context(), owner, "nope")
			return err, w.gh.Token
		}, github.ErrNotFound},
		{"unknown pull request", func(t *testing.T, w world) (error, string) {
			_, _, err := w.client.PR(t.Context(), owner, name, 42)
			return err, w.gh.Token
		}, github.ErrNotFound},
		{"server error", func(t *testing.T, w world) (error, string) {
			w.gh.FailNext(1, http.StatusBadGateway)
			_, err := w.client.Repo(t.Context(), owner, name)
			return err, w.gh.Token
		}, github.ErrUnavailable},
		{"rate limited", func(t *testing.T, w world) (error, string) {
			w.gh.RateLimitNext(1)
			return openPR(w.client), w.gh.Token
		}, github.ErrUnavailable},
		{"certificate not trusted", func(t *testing.T, w world) (error, string) {
			gh := testkit.NewGitHubTLS(t, testkit.NewCA(t))
			gh.AddRepo(owner, name, nil)
			_, err := newClient(t, gh, gh.Token).Repo(t.Context(), owner, name)
			return err, gh.Token
		}, github.ErrUntrusted},
		{"server gone", func(t *testing.T, w world) (error, string) {
			w.gh.Close()
			_, _, err := w.client.PR(t.Context(), owner, name, 1)
			return err, w.gh.Token
		}, github.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			err, token := tc.do(t, w)
			t.Log(err)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got := github.Explain(err); got != tc.want.Error() {
				t.Errorf("Explain = %q, want %q", got, tc.want.Error())
			}
			for _, tok := range []string{token, w.gh.Token} {
				if tok != "" && strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), tok) {
					t.Errorf("error shows a token: %v", err)
				}
			}
		})
	}
}

func TestNoTokenInStrings(t *testing.T) {
	const token = "ghp_sekritsekritsekrit"
	cfg := github.Config{URL: "http://127.0.0.1:1/api/v3/", Token: token}
	c, err := github.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	logger.Info("github", "config", cfg, "client", c)
	logger.Info("github", "config", &cfg)
	for _, s := range []string{
		fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg),
		fmt.Sprintf("%v %+v %#v %s", &cfg, &cfg, &cfg, &cfg),
		fmt.Sprintf("%v %+v %#v %s", c, c, c, c),
		log.String(),
	} {
		if strings.Contains(s, token) {
			t.Errorf("token shown in %q", s)
		}
		if !strings.Contains(s, "[redacted]") {
			t.Errorf("%q does not say the token is redacted", s)
		}
	}
}

// TestDraft: a draft opens as one, does not merge (GitHub's 405), is
// marked ready through GraphQL (twice is fine), and then merges; a
// read-only token cannot mark it.
func TestDraft(t *testing.T) {
	w := newWorld(t)
	pr, _, err := w.client.OpenPR(t.Context(), owner, name, github.NewPR{Title: "Task 1", Body: "b", Head: branch, Base: "main", Draft: true})
	if err != nil || !pr.Draft {
		t.Fatalf("OpenPR draft: %+v, %v", pr, err)
	}
	if got := w.gh.PRs(w.repo.FullName); len(got) != 1 || !got[0].Draft {
		t.Fatalf("on GitHub: %+v", got)
	}
	if _, err := w.client.Merge(t.Context(), owner, name, pr.Number, pr.HeadSHA, github.MergeCommit); err == nil {
		t.Fatal("a draft merged")
	}
	ro := newClient(t, w.gh, w.gh.NewToken(true))
	if err := ro.MarkReady(t.Context(), owner, name, pr.Number); err == nil {
		t.Error("a read-only token marked the draft ready")
	}
	if err := w.client.EditBody(t.Context(), owner, name, pr.Number, "new body"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := w.client.MarkReady(t.Context(), owner, name, pr.Number); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.gh.PRs(w.repo.FullName); got[0].Draft || got[0].Body != "new body" {
		t.Fatalf("after MarkReady and EditBody: %+v", got)
	}
	if w.gh.Requests("POST /graphql") != 2 {
		t.Errorf("GraphQL calls: %d, want 2 (the read-only one, and one for the draft; a ready one is left as it is)", w.gh.Requests("POST /graphql"))
	}
	if _, err := w.client.Merge(t.Context(), owner, name, pr.Number, pr.HeadSHA, github.MergeCommit); err != nil {
		t.Fatalf("merge once ready: %v", err)
	}
}
