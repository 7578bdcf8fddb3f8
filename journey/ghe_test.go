package journey

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// newEnterpriseWorld is a world whose GitHub is an Enterprise server
// behind a private CA, over HTTPS, its repository acme/app public (cloned
// without a token, as Fetch clones). Fetch learns of the CA only through
// SSL_CERT_FILE in its environment. No workspace exists yet.
func newEnterpriseWorld(t *testing.T) (*world, *testkit.GitHub, *testkit.CA, testkit.GitHubRepo) {
	t.Helper()
	w := newWorld(t)
	ca := testkit.NewCA(t)
	gh := testkit.NewGitHubTLS(t, ca)
	repo := gh.AddRepo("acme", "app", map[string]string{"README.md": "# app\n"})
	gh.SetPublic(repo.FullName, true)
	w.env["SSL_CERT_FILE"] = ca.File
	w.env["FETCH_GITHUB_TOKEN"] = gh.Token
	w.env["FETCH_GITHUB_URL"] = gh.APIURL
	w.env["FETCH_PR_POLL"] = "1s"
	w.watch = append(w.watch, gh.Token)
	return w, gh, ca, repo
}

// S1 of issue 28's GitHub Enterprise: with the private CA given only
// through SSL_CERT_FILE, Fetch clones the workspace over HTTPS, pushes a
// task's branch, opens its pull request and, in an autonomous workspace,
// merges it; the merge comes back to the chat.
func TestJourneyGitHubEnterpriseBehindPrivateCA(t *testing.T) {
	t.Parallel()
	w, gh, ca, repo := newEnterpriseWorld(t)
	if !strings.HasPrefix(repo.CloneURL, "https://") {
		t.Fatalf("clone URL %s is not HTTPS", repo.CloneURL)
	}

	out, err := w.fetchCLI("workspace", "clone", repo.CloneURL, "app")
	if err != nil {
		t.Fatalf("fetch workspace clone over HTTPS with SSL_CERT_FILE: %v\n%s", err, out)
	}
	if got := gh.Requests("GIT git-upload-pack"); got == 0 {
		t.Fatalf("the clone never reached the fake GitHub: %s", out)
	}
	if _, err := w.gitShow("app", "HEAD", "README.md"); err != nil {
		t.Fatalf("the cloned workspace has no README.md: %v", err)
	}
	out, err = w.fetchCLI("doctor")
	if !strings.Contains(out, "git trusts "+ca.File) {
		t.Errorf("fetch doctor does not say git trusts %s (%v):\n%s", ca.File, err, out)
	}

	w.start()
	w.ask(ownerID, "/ship app autonomous", regexp.MustCompile(`app now ships: autonomous`))
	w.ask(ownerID, "/autonomy autonomous", regexp.MustCompile(`(?i)autonom`))
	w.llm.ScriptFor(reviewTool, reviewAnswer("approve", "Adds the health endpoint."))
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	pr := w.awaitNew(m, regexp.MustCompile(`🔀 Pull request #\d+ opened and merged for task `+id+`.*`), "the merged pull request")
	if !strings.Contains(pr.Text, gh.URL) {
		t.Errorf("the link %q is not on the Enterprise server %s", pr.Text, gh.URL)
	}
	prs := gh.PRs(repo.FullName)
	if len(prs) != 1 || prs[0].Head != "fetch/"+id || !prs[0].Merged {
		t.Fatalf("pull requests on GitHub: %+v; want fetch/%s, merged", prs, id)
	}
	if rv := gh.Reviews(repo.FullName, prs[0].Number); len(rv) != 1 || !strings.Contains(rv[0].Body, "Fetch's review: approve") {
		t.Errorf("reviews on the pull request: %+v; want Fetch's approving review", rv)
	}
	if got, ok := gh.File(repo.FullName, "main", "health.go"); !ok || !strings.Contains(got, "fake claude was here") {
		t.Errorf("health.go on GitHub's main = %q, %v", got, ok)
	}
	w.awaitNew(m, regexp.MustCompile(`🎉 Pull request #\d+ of task `+id+` was merged`), "the merge notice")
	for _, msg := range w.messages(ownerID) {
		if strings.Contains(msg.Content, "certificate") {
			t.Errorf("a message speaks of a certificate failure: %q", msg.Content)
		}
	}
}

// S2: a CA file that does not exist, or holds no certificate, is named by
// fetch doctor and stops fetch serve at start with the file named.
func TestJourneyGitHubEnterpriseBadCAFile(t *testing.T) {
	t.Parallel()
	w, _, ca, _ := newEnterpriseWorld(t)
	missing := filepath.Join(filepath.Dir(ca.File), "no-such-ca.pem")
	for _, tc := range []struct{ name, file, says string }{
		{"missing", missing, "no such file"},
		{"not a certificate", filepath.Join(w.data, "fetch.db-not-a-ca"), "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file != missing {
				if err := os.WriteFile(tc.file, []byte("not a certificate\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w.env["SSL_CERT_FILE"] = tc.file
			out, err := w.fetchCLI("doctor")
			if err == nil || !strings.Contains(out, "SSL_CERT_FILE") || !strings.Contains(out, tc.file) || !strings.Contains(out, tc.says) {
				t.Errorf("fetch doctor (%v) does not name SSL_CERT_FILE %s (%s):\n%s", err, tc.file, tc.says, out)
			}
			out, err = w.fetchCLI("serve")
			if err == nil {
				t.Fatalf("fetch serve started with SSL_CERT_FILE=%s:\n%s", tc.file, out)
			}
			if first := strings.SplitN(strings.TrimSpace(out), "\n", 3); len(first) < 2 || !strings.Contains(strings.Join(first, "\n"), tc.file) {
				t.Errorf("fetch serve's first error does not name %s:\n%s", tc.file, out)
			}
		})
	}
}

// S3: without the CA, Fetch's own git does not trust the server, and the
// task's result says so and what to set, not that GitHub is down.
func TestJourneyGitHubEnterpriseUntrusted(t *testing.T) {
	t.Parallel()
	w, gh, _, repo := newEnterpriseWorld(t)
	delete(w.env, "SSL_CERT_FILE")
	out, err := w.fetchCLI("workspace", "clone", repo.CloneURL, "app")
	if err == nil || !strings.Contains(out, "certificate") {
		t.Fatalf("a clone from an untrusted server (%v) does not speak of its certificate:\n%s", err, out)
	}
	// The workspace as a clone made by the owner, so that a task can run.
	cloneAsOwner(t, w, repo)
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "not pushed") || !strings.Contains(res.Text, "certificate is not trusted") || !strings.Contains(res.Text, "SSL_CERT_FILE") {
		t.Errorf("the result does not say the certificate is not trusted and what to set: %q", res.Text)
	}
	if b := gh.Branches(repo.FullName); len(b) != 1 {
		t.Errorf("branches on GitHub: %v; want only main", b)
	}
}
