package taskpage

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// KeySize is the length of the signing key, in bytes.
const KeySize = 32

// DefaultTTL is how long a link stays valid when Links is given none.
const DefaultTTL = 7 * 24 * time.Hour

// Link scopes: what a signature grants.
const (
	// scopeList grants the list and every task it links to: it is the
	// owner's link.
	scopeList = "list"
	// scopeTask grants one task's page and its live stream.
	scopeTask = "task:"
)

// Query parameters of a signed link.
const (
	paramExp = "exp"
	paramSig = "sig"
)

// macContext separates these signatures from any other use of the key.
const macContext = "fetch task page v1"

// Errors of Check; both answer 401.
var (
	ErrBadLink     = errors.New("the link is not valid")
	ErrExpiredLink = errors.New("the link has expired")
)

// LoadKey reads the signing key at path, creating it (KeySize random
// bytes, mode 0600) when it does not exist. A key of the wrong size or a
// file others may read is an error: a readable key lets anyone make links.
func LoadKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, KeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("taskpage: make key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			// Another process made it first: use theirs.
			return LoadKey(path)
		}
		if err != nil {
			return nil, fmt.Errorf("taskpage: key: %w", err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, fmt.Errorf("taskpage: write key: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("taskpage: write key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("taskpage: key: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("taskpage: key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("taskpage: key %s is readable by others (mode %s); chmod 600 it or remove it to make a new one", path, fi.Mode().Perm())
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("taskpage: key %s holds %d bytes, not %d; remove it to make a new one", path, len(key), KeySize)
	}
	return key, nil
}

// Links makes and checks the page's signed links: HMAC-SHA256 over the
// scope and the expiry, compared in constant time. It is safe for
// concurrent use.
type Links struct {
	key  []byte
	base *url.URL
	ttl  time.Duration
	now  func() time.Time
}

// NewLinks returns Links signing with key for pages under base (an
// http(s) URL, the address the owner's browser reaches), valid for ttl
// (DefaultTTL when 0); now is the clock (time.Now when nil).
func NewLinks(key []byte, base string, ttl time.Duration, now func() time.Time) (*Links, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("taskpage: a key of %d bytes is too short (want %d)", len(key), KeySize)
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("taskpage: base URL %q is not an http(s) URL without query", base)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Links{key: append([]byte(nil), key...), base: u, ttl: ttl, now: now}, nil
}

// Task is the link to one task's page; it opens that task only.
func (l *Links) Task(id string) string {
	return l.url("/t/"+url.PathEscape(id), l.query(scopeTask+id, l.expiry()))
}

// List is the owner's link to the list of tasks.
func (l *Links) List() string {
	return l.url("/tasks", l.query(scopeList, l.expiry()))
}

func (l *Links) expiry() int64 { return l.now().Add(l.ttl).Unix() }

func (l *Links) url(path string, q url.Values) string {
	u := *l.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return u.String()
}

// query is the signed query of scope until exp.
func (l *Links) query(scope string, exp int64) url.Values {
	return url.Values{paramExp: {strconv.FormatInt(exp, 10)}, paramSig: {l.sign(scope, exp)}}
}

func (l *Links) sign(scope string, exp int64) string {
	m := hmac.New(sha256.New, l.key)
	fmt.Fprintf(m, "%s\x00%s\x00%d", macContext, scope, exp)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// check tells whether q signs scope and has not expired; it returns the
// expiry.
func (l *Links) check(scope string, q url.Values) (int64, error) {
	exp, err := strconv.ParseInt(q.Get(paramExp), 10, 64)
	if err != nil || len(q[paramExp]) != 1 || len(q[paramSig]) != 1 {
		return 0, ErrBadLink
	}
	if !hmac.Equal([]byte(q.Get(paramSig)), []byte(l.sign(scope, exp))) {
		return 0, ErrBadLink
	}
	if !l.now().Before(time.Unix(exp, 0)) {
		return 0, ErrExpiredLink
	}
	return exp, nil
}

// taskAccess checks a request for task id: a task link for it, or the
// owner's list link (which the list page hands on to its tasks). It
// returns the query to carry on links and streams of that page.
func (l *Links) taskAccess(id string, q url.Values) (url.Values, error) {
	if exp, err := l.check(scopeTask+id, q); err == nil {
		return l.query(scopeTask+id, exp), nil
	} else if !errors.Is(err, ErrBadLink) {
		return nil, err
	}
	exp, err := l.check(scopeList, q)
	if err != nil {
		return nil, err
	}
	return l.query(scopeList, exp), nil
}
