package testkit_test

import (
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// git runs git in dir, isolated from the user's configuration, and returns
// its combined output and error.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Fetch", "GIT_AUTHOR_EMAIL=fetch@example.com",
		"GIT_COMMITTER_NAME=Fetch", "GIT_COMMITTER_EMAIL=fetch@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// clone clones repo with token and commits a file on a new branch, ready
// to push; it returns the work tree and the commit.
func clone(t *testing.T, gh *testkit.GitHub, repo testkit.GitHubRepo, token, branch string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	mustGit(t, dir, "-c", "http.extraHeader=Authorization: "+testkit.GitHubBasicAuth(token), "clone", "--quiet", repo.CloneURL, ".")
	mustGit(t, dir, "checkout", "--quiet", "-b", branch)
	if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "add", "work.txt")
	mustGit(t, dir, "commit", "--quiet", "-m", "work")
	return dir, mustGit(t, dir, "rev-parse", "HEAD")
}

func TestGitHubGitPush(t *testing.T) {
	noLeaks(t)
	gh := testkit.NewGitHub(t)
	repo := gh.AddRepo("acme", "widget", nil)
	dir, sha := clone(t, gh, repo, gh.Token, "fetch/task-1")
	withToken := func(tok string) []string {
		return []string{"-c", "http.extraHeader=Authorization: " + testkit.GitHubBasicAuth(tok)}
	}

	t.Run("without a token the push fails", func(t *testing.T) {
		out, err := git(t, dir, "push", "--quiet", repo.CloneURL, "fetch/task-1")
		if err == nil {
			t.Fatalf("push without credentials succeeded:\n%s", out)
		}
		if tip := gh.Tip(repo.FullName, "fetch/task-1"); tip != "" {
			t.Errorf("branch exists upstream at %s", tip)
		}
	})
	t.Run("a wrong token fails", func(t *testing.T) {
		args := append(withToken("ghp_wrong"), "push", "--quiet", repo.CloneURL, "fetch/task-1")
		if out, err := git(t, dir, args...); err == nil {
			t.Fatalf("push with a wrong token succeeded:\n%s", out)
		}
	})
	t.Run("a read-only token fails", func(t *testing.T) {
		ro := gh.NewToken(true)
		args := append(withToken(ro), "push", "--quiet", repo.CloneURL, "fetch/task-1")
		if out, err := git(t, dir, args...); err == nil {
			t.Fatalf("push with a read-only token succeeded:\n%s", out)
		}
	})
	t.Run("with the token the push lands", func(t *testing.T) {
		before := len(gh.Authorizations())
		mustGit(t, dir, append(withToken(gh.Token), "push", "--quiet", repo.CloneURL, "fetch/task-1")...)
		if tip := gh.Tip(repo.FullName, "fetch/task-1"); tip != sha {
			t.Errorf("upstream fetch/task-1 = %q, want %s", tip, sha)
		}
		if got, ok := gh.File(repo.FullName, "fetch/task-1", "work.txt"); !ok || got != "done\n" {
			t.Errorf("work.txt upstream = %q, %v", got, ok)
		}
		if gh.Requests("GIT git-receive-pack") == 0 {
			t.Error("no receive-pack request counted")
		}
		auths := gh.Authorizations()[before:]
		if !slices.Contains(auths, testkit.GitHubBasicAuth(gh.Token)) {
			t.Errorf("authorizations %q do not include the token's", auths)
		}
	})
	t.Run("a push bigger than http.postBuffer lands", func(t *testing.T) {
		// git sends it chunked, which CGI cannot take as is.
		big := make([]byte, 3<<20)
		_, _ = rand.Read(big) // incompressible
		if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		mustGit(t, dir, "add", "big.bin")
		mustGit(t, dir, "commit", "--quiet", "-m", "big")
		sha := mustGit(t, dir, "rev-parse", "HEAD")
		mustGit(t, dir, append(withToken(gh.Token), "push", "--quiet", repo.CloneURL, "fetch/task-1")...)
		if tip := gh.Tip(repo.FullName, "fetch/task-1"); tip != sha {
			t.Errorf("upstream fetch/task-1 = %q, want %s", tip, sha)
		}
	})
	t.Run("a protected branch refuses the push", func(t *testing.T) {
		gh.Protect(repo.FullName, "main")
		before := gh.Tip(repo.FullName, "main")
		out, err := git(t, dir, append(withToken(gh.Token), "push", repo.CloneURL, "fetch/task-1:main")...)
		if err == nil {
			t.Fatalf("push to a protected branch succeeded:\n%s", out)
		}
		if !strings.Contains(out, "GH006") {
			t.Errorf("refusal does not say GH006:\n%s", out)
		}
		if after := gh.Tip(repo.FullName, "main"); after != before {
			t.Errorf("main moved from %s to %s", before, after)
		}
	})
	t.Run("an upstream commit moves the base and fetch sees it", func(t *testing.T) {
		sha := gh.Commit(repo.FullName, "main", "other.txt", "x\n", "upstream work")
		mustGit(t, dir, append(withToken(gh.Token), "fetch", "--quiet", repo.CloneURL, "main")...)
		if got := mustGit(t, dir, "rev-parse", "FETCH_HEAD"); got != sha {
			t.Errorf("fetched main %s, want %s", got, sha)
		}
		if b := gh.Branches(repo.FullName); b["main"] != sha || b["fetch/task-1"] == "" {
			t.Errorf("branches = %v", b)
		}
	})
}

// TestGitHubREST checks the fake's REST side on raw HTTP: the things the
// go-github tests in internal/github do not look at.
func TestGitHubREST(t *testing.T) {
	noLeaks(t)
	gh := testkit.NewGitHub(t)
	gh.AddRepo("acme", "widget", nil)
	get := func(path, auth, etag string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, gh.APIURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"bearer", "repos/acme/widget", "Bearer " + gh.Token, 200},
		{"token scheme", "repos/acme/widget", "token " + gh.Token, 200},
		{"no token", "repos/acme/widget", "", 401},
		{"wrong token", "repos/acme/widget", "Bearer nope", 401},
		{"unknown repo", "repos/acme/nope", "Bearer " + gh.Token, 404},
		{"unknown route", "repos/acme/widget/issues", "Bearer " + gh.Token, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.path, tc.auth, "").StatusCode; got != tc.want {
				t.Errorf("GET %s = %d, want %d", tc.path, got, tc.want)
			}
		})
	}
	t.Run("etag", func(t *testing.T) {
		first := get("repos/acme/widget", "Bearer "+gh.Token, "")
		etag := first.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		if got := get("repos/acme/widget", "Bearer "+gh.Token, etag).StatusCode; got != http.StatusNotModified {
			t.Errorf("conditional GET = %d, want 304", got)
		}
		if gh.NotModified() != 1 {
			t.Errorf("NotModified = %d, want 1", gh.NotModified())
		}
		if n := gh.Requests("GET /repos/{owner}/{repo}"); n < 3 {
			t.Errorf("GET repo counted %d times", n)
		}
	})
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
}

// noLeaks checks, after the test's cleanups (the fake's server closed),
// that the test left no goroutine behind.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// TestGitHubPulls checks GitHub's validation of new pull requests and that
// pushes reach them, on raw HTTP.
func TestGitHubPulls(t *testing.T) {
	noLeaks(t)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	gh := testkit.NewGitHub(t)
	repo := gh.AddRepo("acme", "widget", nil)
	gh.Commit(repo.FullName, "work", "a.txt", "a\n", "work")
	create := func(head string) (int, string) {
		t.Helper()
		body := `{"title":"T","head":"` + head + `","base":"main"}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, gh.APIURL+"repos/acme/widget/pulls", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+gh.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	if code, body := create("no-such-branch"); code != 422 || !strings.Contains(body, `"field":"head"`) {
		t.Errorf("PR from a missing branch: %d %s", code, body)
	}
	if code, body := create("main"); code != 422 || !strings.Contains(body, "No commits between main and main") {
		t.Errorf("PR without commits: %d %s", code, body)
	}
	if code, body := create("acme:work"); code != 201 {
		t.Fatalf("PR: %d %s", code, body)
	}
	if code, body := create("work"); code != 422 || !strings.Contains(body, "A pull request already exists for acme:work.") {
		t.Errorf("second PR: %d %s", code, body)
	}

	// Deleting the head by a push closes the pull request.
	dir := t.TempDir()
	auth := "http.extraHeader=Authorization: " + testkit.GitHubBasicAuth(gh.Token)
	mustGit(t, dir, "-c", auth, "clone", "--quiet", repo.CloneURL, ".")
	mustGit(t, dir, "-c", auth, "push", "--quiet", repo.CloneURL, "--delete", "work")
	if prs := gh.PRs(repo.FullName); len(prs) != 1 || prs[0].State != "closed" || prs[0].Merged {
		t.Errorf("after deleting the head: %+v", prs)
	}

	// Pushing a head's commits into the base marks its pull request merged.
	sha := gh.Commit(repo.FullName, "work2", "b.txt", "b\n", "more work")
	if code, body := create("work2"); code != 201 {
		t.Fatalf("PR: %d %s", code, body)
	}
	mustGit(t, dir, "-c", auth, "fetch", "--quiet", repo.CloneURL, "work2")
	mustGit(t, dir, "-c", auth, "push", "--quiet", repo.CloneURL, "FETCH_HEAD:main")
	if prs := gh.PRs(repo.FullName); len(prs) != 2 || !prs[1].Merged || prs[1].MergeCommitSHA != sha {
		t.Errorf("after pushing the head into main: %+v", prs)
	}
}
