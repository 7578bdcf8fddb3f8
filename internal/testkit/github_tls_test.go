package testkit_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestGitHubTLS: over HTTPS with a private CA, git and the REST API
// answer to a client that trusts the CA, and refuse one that does not; a
// public repository clones without a token, a push still needs one.
func TestGitHubTLS(t *testing.T) {
	noLeaks(t)
	// git prefers GIT_SSL_CAINFO to -c http.sslCAInfo: the test's own
	// environment must not choose the CA.
	t.Setenv("GIT_SSL_CAINFO", "")
	os.Unsetenv("GIT_SSL_CAINFO")
	ca := testkit.NewCA(t)
	gh := testkit.NewGitHubTLS(t, ca)
	if !strings.HasPrefix(gh.URL, "https://") || !strings.HasPrefix(gh.APIURL, "https://") {
		t.Fatalf("URL %s, API %s: want https", gh.URL, gh.APIURL)
	}
	repo := gh.AddRepo("acme", "widget", nil)

	t.Run("git without the CA fails verification", func(t *testing.T) {
		out, err := git(t, t.TempDir(), "-c", "http.extraHeader=Authorization: "+testkit.GitHubBasicAuth(gh.Token), "clone", "--quiet", repo.CloneURL, "x")
		if err == nil || !strings.Contains(strings.ToLower(out), "certificate") {
			t.Fatalf("clone without the CA: %v\n%s", err, out)
		}
	})
	t.Run("git with the CA clones and pushes", func(t *testing.T) {
		dir := t.TempDir()
		auth := "http.extraHeader=Authorization: " + testkit.GitHubBasicAuth(gh.Token)
		mustGit(t, dir, "-c", "http.sslCAInfo="+ca.File, "-c", auth, "clone", "--quiet", repo.CloneURL, ".")
		mustGit(t, dir, "commit", "--quiet", "--allow-empty", "-m", "work")
		sha := mustGit(t, dir, "rev-parse", "HEAD")
		mustGit(t, dir, "-c", "http.sslCAInfo="+ca.File, "-c", auth, "push", "--quiet", repo.CloneURL, "HEAD:refs/heads/work")
		if tip := gh.Tip(repo.FullName, "work"); tip != sha {
			t.Errorf("upstream work = %q, want %s", tip, sha)
		}
	})
	t.Run("a public repository clones without a token, pushes with one only", func(t *testing.T) {
		gh.SetPublic(repo.FullName, true)
		dir := t.TempDir()
		mustGit(t, dir, "-c", "http.sslCAInfo="+ca.File, "clone", "--quiet", repo.CloneURL, ".")
		mustGit(t, dir, "commit", "--quiet", "--allow-empty", "-m", "anonymous")
		if out, err := git(t, dir, "-c", "http.sslCAInfo="+ca.File, "push", "--quiet", repo.CloneURL, "HEAD:refs/heads/anon"); err == nil {
			t.Fatalf("an anonymous push succeeded:\n%s", out)
		}
		gh.SetPublic(repo.FullName, false)
		if out, err := git(t, t.TempDir(), "-c", "http.sslCAInfo="+ca.File, "clone", "--quiet", repo.CloneURL, "x"); err == nil {
			t.Fatalf("an anonymous clone of a private repository succeeded:\n%s", out)
		}
	})
	t.Run("REST trusts only with the CA", func(t *testing.T) {
		req := func(c *http.Client) (*http.Response, error) {
			r, _ := http.NewRequestWithContext(t.Context(), "GET", gh.APIURL+"repos/acme/widget", nil)
			r.Header.Set("Authorization", "Bearer "+gh.Token)
			return c.Do(r)
		}
		if resp, err := req(&http.Client{}); err == nil {
			resp.Body.Close()
			t.Fatal("a client without the CA was answered")
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca.PEM)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tr.CloseIdleConnections()
		resp, err := req(&http.Client{Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}
