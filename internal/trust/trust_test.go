package trust_test

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/trust"
)

func TestGitArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ca   trust.CA
		want []string
	}{
		{"none", trust.CA{}, nil},
		{"file", trust.CA{File: "/etc/acme/ca.pem"}, []string{"-c", "http.sslCAInfo=/etc/acme/ca.pem"}},
		{"git's own file wins for git", trust.CA{File: "/a.pem", GitFile: "/git.pem"}, []string{"-c", "http.sslCAInfo=/git.pem"}},
		{"directory", trust.CA{Dir: "/etc/acme/certs"}, []string{"-c", "http.sslCAPath=/etc/acme/certs"}},
		{"both", trust.CA{File: "/a b.pem", Dir: "/certs"}, []string{"-c", "http.sslCAInfo=/a b.pem", "-c", "http.sslCAPath=/certs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.ca.GitArgs()); diff != "" {
				t.Errorf("GitArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	if errs := (trust.CA{File: ca.File, Dir: dir}).Check(); len(errs) != 0 {
		t.Errorf("a good CA: %v", errs)
	}
	errs := (trust.CA{File: missing, GitFile: garbage, Dir: ca.File}).Check()
	if len(errs) != 3 {
		t.Fatalf("errors %v, want three", errs)
	}
	if !strings.Contains(errs[0].Error(), missing) || !errors.Is(errs[0], fs.ErrNotExist) {
		t.Errorf("missing file: %v", errs[0])
	}
	if !strings.Contains(errs[1].Error(), garbage) || !errors.Is(errs[1], trust.ErrNoCertificate) {
		t.Errorf("garbage file: %v", errs[1])
	}
	if !strings.Contains(errs[2].Error(), ca.File) || !strings.Contains(errs[2].Error(), "not a directory") {
		t.Errorf("a file as directory: %v", errs[2])
	}
	if err := trust.CheckFile(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("a directory as file: %v", err)
	}
}

// TestHTTPClient: the client trusts the CA however it is given (a file,
// git's file, a directory), and no client trusts it without.
func TestHTTPClient(t *testing.T) {
	ca := testkit.NewCA(t)
	gh := testkit.NewGitHubTLS(t, ca)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acme.crt"), ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	get := func(c *http.Client) error {
		if c == nil {
			c = &http.Client{}
		}
		resp, err := c.Get(gh.URL + "api/v3/repos/acme/none")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if c, err := (trust.CA{}).HTTPClient(); err != nil || c != nil {
		t.Fatalf("the zero CA: %v, %v; want the default client", c, err)
	}
	if err := get(nil); err == nil {
		t.Fatal("the default client trusts the private CA")
	}
	for _, ca := range []trust.CA{{File: ca.File}, {GitFile: ca.File}, {Dir: dir}} {
		c, err := ca.HTTPClient()
		if err != nil {
			t.Fatal(err)
		}
		if err := get(c); err != nil {
			t.Errorf("%+v: %v", ca, err)
		}
		c.CloseIdleConnections()
	}
	if _, err := (trust.CA{File: filepath.Join(dir, "README")}).HTTPClient(); !errors.Is(err, trust.ErrNoCertificate) {
		t.Errorf("a file with no certificate: %v", err)
	}
}
