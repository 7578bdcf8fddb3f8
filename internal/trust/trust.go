// Package trust provides the certificate authorities Fetch trusts for
// HTTPS beyond the system's, as the owner gives them in Fetch's own
// environment (SSL_CERT_FILE, SSL_CERT_DIR, GIT_SSL_CAINFO: cmd/fetch reads
// them, this package reads no variable). They reach Go's HTTP clients as a
// certificate pool and host git as command-line configuration
// (-c http.sslCAInfo, -c http.sslCAPath): never through a git
// configuration file, which a kennel might write.
//
// It imports nothing of Fetch's; a CA is a value, safe for concurrent use.
package trust

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
)

// maxFile bounds a CA bundle read: the system's is about 200 KiB.
const maxFile = 16 << 20

// ErrNoCertificate: a CA file holds no PEM certificate Go can parse.
var ErrNoCertificate = errors.New("no PEM certificate in it")

// CA is what Fetch trusts beyond the system's authorities. The zero CA
// adds nothing.
type CA struct {
	// File is a PEM bundle both Go and git trust (SSL_CERT_FILE).
	File string
	// Dir is a directory of PEM certificates both trust (SSL_CERT_DIR).
	Dir string
	// GitFile is git's own bundle (GIT_SSL_CAINFO); when set, git takes
	// it instead of File, as git itself does, and Go trusts it too.
	GitFile string
}

// Empty reports whether c adds nothing.
func (c CA) Empty() bool { return c == CA{} }

// CheckFile reads the PEM bundle at path: an error, naming the file, when
// it is missing, unreadable or holds no certificate.
func CheckFile(path string) error {
	_, err := readBundle(path)
	return err
}

// CheckDir checks that path is a directory Fetch can read.
func CheckDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("CA directory %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("CA directory %s: not a directory", path)
	}
	return nil
}

// readBundle reads and parses the PEM bundle at path.
func readBundle(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("CA file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("CA file %s: not a regular file", path)
	}
	if fi.Size() > maxFile {
		return nil, fmt.Errorf("CA file %s: over %d bytes", path, maxFile)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file %s: %w", path, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: %w", path, ErrNoCertificate)
	}
	return pem, nil
}

// Check checks every file and directory of c, returning one error per
// problem, each naming its file.
func (c CA) Check() []error {
	var errs []error
	for _, f := range []string{c.File, c.GitFile} {
		if f != "" {
			if err := CheckFile(f); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.Dir != "" {
		if err := CheckDir(c.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// GitFileInUse is the bundle git is given: GitFile, else File.
func (c CA) GitFileInUse() string {
	if c.GitFile != "" {
		return c.GitFile
	}
	return c.File
}

// GitArgs are the options that make host git trust c, to put before its
// subcommand: none for the zero CA.
func (c CA) GitArgs() []string {
	var args []string
	if f := c.GitFileInUse(); f != "" {
		args = append(args, "-c", "http.sslCAInfo="+f)
	}
	if c.Dir != "" {
		args = append(args, "-c", "http.sslCAPath="+c.Dir)
	}
	return args
}

// Pool is the system's pool with every certificate of c added (the files'
// and those of the directory's files that parse, as Go reads a
// certificate directory).
func (c CA) Pool() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range []string{c.File, c.GitFile} {
		if f == "" {
			continue
		}
		pem, err := readBundle(f)
		if err != nil {
			return nil, err
		}
		pool.AppendCertsFromPEM(pem)
	}
	if c.Dir != "" {
		entries, err := os.ReadDir(c.Dir)
		if err != nil {
			return nil, fmt.Errorf("CA directory %s: %w", c.Dir, err)
		}
		for _, e := range entries {
			if e.Type()&fs.ModeType != 0 && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			if pem, err := readBundle(filepath.Join(c.Dir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(pem)
			}
		}
	}
	return pool, nil
}

// HTTPClient is an HTTP client that trusts c as well as the system: nil
// (the default client) for the zero CA.
func (c CA) HTTPClient() (*http.Client, error) {
	if c.Empty() {
		return nil, nil
	}
	pool, err := c.Pool()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tr.TLSClientConfig.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = new(tls.Config)
	}
	tr.TLSClientConfig.RootCAs = pool
	return &http.Client{Transport: tr}, nil
}
