package github

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	gh "github.com/google/go-github/v76/github"
)

// The classes of failure. Each sentence says what to do.
var (
	ErrNoToken     = errors.New("no GitHub token: set FETCH_GITHUB_TOKEN to a fine-grained token with Contents and Pull requests read and write")
	ErrAuth        = errors.New("GitHub rejected the token as wrong or expired: create a new one and set FETCH_GITHUB_TOKEN")
	ErrPermission  = errors.New("the GitHub token may not do this: give it Contents: read and write, Pull requests: read and write and Metadata: read on this repository")
	ErrNotFound    = errors.New("GitHub has no such repository, branch or pull request, or the token cannot see it: check the name and the token's repository access")
	ErrRejected    = errors.New("GitHub refused the change (a conflict, a moved branch or nothing to merge): look at the pull request on GitHub")
	ErrUnavailable = errors.New("GitHub is unreachable, failing or rate-limiting: try again later")
	ErrUntrusted   = errors.New("GitHub's TLS certificate is not trusted: give its certificate authority to Fetch in SSL_CERT_FILE (a PEM file) and restart it")
)

// classes are the sentinels Explain knows, most specific first.
var classes = []error{ErrNoToken, ErrAuth, ErrPermission, ErrNotFound, ErrRejected, ErrUntrusted, ErrUnavailable}

// Explain returns what the user reads about err: its class's sentence, or
// a generic one. The detail (URLs, GitHub's message) belongs in the log.
func Explain(err error) string {
	for _, c := range classes {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return "the GitHub request failed: see Fetch's log"
}

// classify wraps err from go-github with op and its class.
func classify(op string, err error) error {
	if class := classOf(err); class != nil {
		return fmt.Errorf("github: %s: %w: %w", op, class, err)
	}
	return fmt.Errorf("github: %s: %w", op, err)
}

// classOf is err's class, nil for none (a cancelled context, a bug).
func classOf(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &rate) || errors.As(err, &abuse) {
		return ErrUnavailable
	}
	var otp *gh.TwoFactorAuthError
	if errors.As(err, &otp) {
		return ErrAuth
	}
	if code := statusOf(err); code != 0 {
		switch {
		case code == http.StatusUnauthorized:
			return ErrAuth
		case code == http.StatusForbidden:
			return ErrPermission
		case code == http.StatusNotFound:
			return ErrNotFound
		case code == http.StatusMethodNotAllowed, code == http.StatusConflict, code == http.StatusUnprocessableEntity:
			return ErrRejected
		case code == http.StatusTooManyRequests, code >= 500:
			return ErrUnavailable
		}
		return nil
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, &verify) {
		return ErrUntrusted
	}
	var uerr *url.Error
	var nerr net.Error
	if errors.As(err, &uerr) || errors.As(err, &nerr) {
		return ErrUnavailable
	}
	return nil
}

// statusOf is the HTTP status of GitHub's error response, 0 if err is not
// one.
func statusOf(err error) int {
	var resp *gh.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		return resp.Response.StatusCode
	}
	return 0
}

// errorMessage is GitHub's message in its error response, "" if err is
// not one.
func errorMessage(err error) string {
	var resp *gh.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Message
	}
	return ""
}
