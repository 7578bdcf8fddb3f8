package redact_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/fetch-dev/fetch/internal/redact"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "go test ./...\n\tok", "go test ./...\n\tok"},
		{"unicode kept", "é 🐕 日本 ⟨x⟩", "é 🐕 日本 ⟨x⟩"},
		{"right-to-left override", "rm -rf ~/\u202eetadpu", "rm -rf ~/⟨U+202E⟩etadpu"},
		{"every bidi control", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
			"⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"},
		{"zero-width", "c\u200bu\u200cr\u200dl\u2060 \u2061\u2062\u2063\u2064\ufeff", "c⟨U+200B⟩u⟨U+200C⟩r⟨U+200D⟩l⟨U+2060⟩ ⟨U+2061⟩⟨U+2062⟩⟨U+2063⟩⟨U+2064⟩⟨U+FEFF⟩"},
		{"soft hyphen and tag", "a\u00adb\U000E0041", "a⟨U+00AD⟩b⟨U+E0041⟩"},
		{"controls", "safe\rrm\x1b[2K\x00\x7f\u0085", "safe⟨U+000D⟩rm⟨U+001B⟩[2K⟨U+0000⟩⟨U+007F⟩⟨U+0085⟩"},
		{"odd spaces", "rm\u00a0-rf\u3000x\u2028y", "rm⟨U+00A0⟩-rf⟨U+3000⟩x⟨U+2028⟩y"},
		{"draws nothing", "a\u034fb\u3164c\ufe0f", "a⟨U+034F⟩b⟨U+3164⟩c⟨U+FE0F⟩"},
		{"not UTF-8", "a\xffb\xc3", "a⟨0xFF⟩b⟨0xC3⟩"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redact.Visible(tc.in)
			if got != tc.want {
				t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := redact.Visible(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

// TestVisibleHidesNothing: no format or control character (but newline
// and tab) is left in Visible's output, whatever the code point.
func TestVisibleHidesNothing(t *testing.T) {
	var b strings.Builder
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.In(r, unicode.Cc, unicode.Cf) && r != '\n' && r != '\t' {
			b.WriteRune(r)
		}
	}
	for _, r := range redact.Visible(b.String()) {
		if unicode.In(r, unicode.Cc, unicode.Cf) && r != '\n' && r != '\t' {
			t.Fatalf("Visible leaves %U", r)
		}
	}
}
