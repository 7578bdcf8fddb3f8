package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/redact"
)

// FuzzRedact checks that a configured secret never survives redaction,
// whatever surrounds it, and that redaction never panics.
func FuzzRedact(f *testing.F) {
	for _, seed := range [][3]string{
		{"token: ", "configured-discord-token-value", "\n"},
		{"", "sk-or-v1-0123456789abcdef", ""},
		{"x]", "]secret1", "secret1"},
		{"[REDAC", "ted]-abc", "ted]-abc"},
		{"\xe2", "\x80\x99secret", "\xe2\x80"},
		{"AKIA", "Z4Q7RXW2PLM3KD5N", " ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, before, secret, after string) {
		if len(secret) > 200 || len(before)+len(after) > 4000 {
			return
		}
		r, err := redact.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		out := r.String(before + secret + after)
		if !configurable(secret) {
			return
		}
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q survives in %q", secret, out)
		}
		if r.String(out) != out && strings.Contains(r.String(out), secret) {
			t.Fatalf("secret %q appears on a second pass", secret)
		}
	})
}

// configurable tells a value New keeps as a secret.
func configurable(s string) bool {
	return len(strings.TrimSpace(s)) >= 6 && !strings.Contains(strings.ToLower(redact.Mask), strings.ToLower(s))
}

// FuzzStripControl checks that stripped text holds no control character
// but newline and tab, is UTF-8, and is stripped already.
func FuzzStripControl(f *testing.F) {
	for _, seed := range []string{
		"plain", "\x1b[31mred\x1b[0m", "\x1b]52;c;cm0gLXJmIC8=\x07", "\x1bPq\x1b\\", "\u009b2J", "\u009d0;x\u009c",
		"a\rb\bc", "\u202eevil", "\xff\xfe", "\x1b", "\x1b]0;unterminated",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := redact.StripControl(in)
		if !utf8.ValidString(out) {
			t.Fatalf("StripControl(%q) = %q: not UTF-8", in, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("StripControl(%q) = %q keeps %U", in, out, r)
			}
		}
		if again := redact.StripControl(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}
