package taskpage

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func testLinks(t testing.TB, now *time.Time) *Links {
	t.Helper()
	l, err := NewLinks(testKey, "https://fetch.example/page/", time.Hour, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// query is the query of a link made by l.
func query(t testing.TB, link string) url.Values {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestLinksShape(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := testLinks(t, &now)
	got := l.Task("ab12cd34")
	if !strings.HasPrefix(got, "https://fetch.example/page/t/ab12cd34?exp=1700003600&sig=") {
		t.Errorf("task link = %q", got)
	}
	if got := l.List(); !strings.HasPrefix(got, "https://fetch.example/page/tasks?exp=1700003600&sig=") {
		t.Errorf("list link = %q", got)
	}
}

func TestLinksCheck(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := testLinks(t, &now)
	task := query(t, l.Task("ab12cd34"))
	list := query(t, l.List())
	other, _ := NewLinks([]byte("another key of thirty-two bytes!"), "https://fetch.example/page/", time.Hour, func() time.Time { return now })
	tamper := func(q url.Values, k, v string) url.Values {
		c := url.Values{}
		for kk, vv := range q {
			c[kk] = append([]string(nil), vv...)
		}
		c.Set(k, v)
		return c
	}
	for _, tc := range []struct {
		name  string
		check func() error
		want  error
	}{
		{"task link opens its task", func() error { _, err := l.taskAccess("ab12cd34", task); return err }, nil},
		{"task link does not open another task", func() error { _, err := l.taskAccess("ab12cd35", task); return err }, ErrBadLink},
		{"task link does not open the list", func() error { _, err := l.check(scopeList, task); return err }, ErrBadLink},
		{"list link opens the list", func() error { _, err := l.check(scopeList, list); return err }, nil},
		{"list link opens a task", func() error { _, err := l.taskAccess("ab12cd35", list); return err }, nil},
		{"later expiry", func() error { _, err := l.taskAccess("ab12cd34", tamper(task, paramExp, "1800000000")); return err }, ErrBadLink},
		{"changed signature", func() error {
			sig := []byte(task.Get(paramSig))
			sig[3] ^= 1
			_, err := l.taskAccess("ab12cd34", tamper(task, paramSig, string(sig)))
			return err
		}, ErrBadLink},
		{"no signature", func() error { _, err := l.taskAccess("ab12cd34", url.Values{paramExp: task[paramExp]}); return err }, ErrBadLink},
		{"nothing", func() error { _, err := l.taskAccess("ab12cd34", url.Values{}); return err }, ErrBadLink},
		{"two signatures", func() error {
			q := tamper(task, paramSig, task.Get(paramSig))
			q.Add(paramSig, "x")
			_, err := l.taskAccess("ab12cd34", q)
			return err
		}, ErrBadLink},
		{"another key's link", func() error { _, err := l.taskAccess("ab12cd34", query(t, other.Task("ab12cd34"))); return err }, ErrBadLink},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.check(); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}

	t.Run("expiry", func(t *testing.T) {
		now = now.Add(time.Hour - time.Second)
		if _, err := l.taskAccess("ab12cd34", task); err != nil {
			t.Errorf("a second before the expiry: %v", err)
		}
		now = now.Add(time.Second)
		if _, err := l.taskAccess("ab12cd34", task); !errors.Is(err, ErrExpiredLink) {
			t.Errorf("at the expiry: %v, want ErrExpiredLink", err)
		}
		if _, err := l.check(scopeList, list); !errors.Is(err, ErrExpiredLink) {
			t.Errorf("list at the expiry: %v, want ErrExpiredLink", err)
		}
	})
}

func TestNewLinksRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		base string
	}{
		{[]byte("short"), "http://127.0.0.1:8686"},
		{testKey, "127.0.0.1:8686"},
		{testKey, "ftp://host/"},
		{testKey, "http://host/?a=b"},
	} {
		if _, err := NewLinks(tc.key, tc.base, 0, nil); err == nil {
			t.Errorf("NewLinks(%q, %q) accepted", tc.key, tc.base)
		}
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "page.key")
	k1, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != KeySize {
		t.Fatalf("key of %d bytes", len(k1))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	k2, err := LoadKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second load gave another key (%v)", err)
	}
	os.Chmod(path, 0o644)
	if _, err := LoadKey(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a key others may read: %v", err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := LoadKey(path); err == nil || !strings.Contains(err.Error(), "holds 5 bytes") {
		t.Errorf("a short key: %v", err)
	}
}
