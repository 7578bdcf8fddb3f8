package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/doctor"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/trust"
)

// TestConfigCA: the certificate authorities come from SSL_CERT_FILE,
// SSL_CERT_DIR and GIT_SSL_CAINFO, made absolute; a missing file, one
// that holds no certificate, a directory that is not one and a list of
// directories are problems that name the variable and the file.
func TestConfigCA(t *testing.T) {
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/h", envSSLCertFile: ca.File, envSSLCertDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CA != (trust.CA{File: ca.File, Dir: dir}) {
		t.Errorf("CA = %+v", cfg.CA)
	}
	t.Chdir(filepath.Dir(ca.File))
	cfg, err = loadConfig(envOf(map[string]string{"HOME": "/h", envGitSSLCA: filepath.Base(ca.File)}))
	if err != nil || cfg.CA.GitFile != ca.File {
		t.Errorf("a relative GIT_SSL_CAINFO: %+v, %v; want %s", cfg.CA, err, ca.File)
	}

	missing := filepath.Join(dir, "missing.pem")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loadConfig(envOf(map[string]string{"HOME": "/h", envSSLCertFile: missing, envGitSSLCA: garbage, envSSLCertDir: ca.File}))
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("err %v; want three problems", err)
	}
	for i, want := range [][]string{
		{envSSLCertFile, missing, "no such file"},
		{envGitSSLCA, garbage, "no PEM certificate"},
		{envSSLCertDir, ca.File, "not a directory"},
	} {
		for _, w := range want {
			if !strings.Contains(ce.Problems[i], w) {
				t.Errorf("problem %q lacks %q", ce.Problems[i], w)
			}
		}
	}
	_, err = loadConfig(envOf(map[string]string{"HOME": "/h", envSSLCertDir: dir + ":" + dir}))
	if err == nil || !strings.Contains(err.Error(), "one directory") {
		t.Errorf("two directories: %v", err)
	}
}

func TestDoctorCACheck(t *testing.T) {
	if _, ok := caCheck(trust.CA{}); ok {
		t.Error("a check without any CA set")
	}
	c, ok := caCheck(trust.CA{File: "/ca.pem", GitFile: "/git.pem", Dir: "/certs"})
	if !ok || c.Status != doctor.OK || c.Name != "certificates" {
		t.Fatalf("check %+v", c)
	}
	for _, want := range []string{"git trusts /git.pem", "git trusts the directory /certs", "GitHub calls trust /ca.pem, /git.pem, /certs"} {
		if !strings.Contains(c.Detail, want) {
			t.Errorf("detail %q lacks %q", c.Detail, want)
		}
	}
}
