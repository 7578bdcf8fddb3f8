package redact_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/redact"
)

// token stands for a configured GitHub token.
const token = "ghp_Zq8Xr2Lm5Nv7Tb1Kc4Wd9Ys3Hf6Jp0Ae8Ug2"

// TestBasicHeaderIsMasked: the Authorization header Fetch's mirror gives
// git (base64 of x-access-token:TOKEN) is masked whole wherever it is
// printed, as the mirror builds it.
func TestBasicHeaderIsMasked(t *testing.T) {
	r, err := redact.New(token)
	if err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, in := range []string{
		"Authorization: Basic " + basic,
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic + "\n",
		`{"header":"Basic ` + basic + `"}`,
		"Basic " + base64.RawURLEncoding.EncodeToString([]byte("x-access-token:"+token)),
	} {
		out := r.String(in)
		if strings.Contains(out, basic[:len(basic)-4]) || strings.Contains(out, "Basic "+basic[:24]) || !strings.Contains(out, "Basic "+redact.Mask) {
			t.Errorf("String(%q) = %q; want the credential masked whole", in, out)
		}
	}
}

// TestDisguisedSecretsAreMasked: a configured secret split, encoded or
// sprinkled with invisible characters is masked, and the text around it
// stays.
func TestDisguisedSecretsAreMasked(t *testing.T) {
	r, err := redact.New(token)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(enc *base64.Encoding, prefix string) string {
		return enc.EncodeToString([]byte(prefix + token + "!"))
	}
	for _, tc := range []struct{ name, disguised string }{
		{"LF", token[:10] + "\n" + token[10:]},
		{"CRLF", token[:5] + "\r\n" + token[5:20] + "\r\n" + token[20:]},
		{"ANSI colour", token[:8] + "\x1b[31m" + token[8:] + "\x1b[0m"},
		{"ANSI OSC", token[:8] + "\x1b]0;title\x07" + token[8:]},
		{"C1 CSI", token[:8] + "\u009b1m" + token[8:]},
		{"zero-width space", strings.Join(strings.Split(token, ""), "\u200b")},
		{"joiner and BOM", token[:3] + "\u200d" + token[3:9] + "\ufeff" + token[9:] + "\u2060"},
		{"percent every byte", percentAll(token)},
		{"query escape", url.QueryEscape(token + " x")},
		{"percent lower hex", strings.ReplaceAll(percentAll(token), "%5F", "%5f")},
		{"base64 std align 0", b64(base64.StdEncoding, "")},
		{"base64 std align 1", b64(base64.StdEncoding, "a")},
		{"base64 std align 2", b64(base64.StdEncoding, "ab")},
		{"base64 url raw align 1", b64(base64.RawURLEncoding, "a")},
		{"base64 url align 2", b64(base64.URLEncoding, "ab")},
		{"base64 wrapped at 76", wrap(b64(base64.StdEncoding, strings.Repeat("x", 50)), 20)},
		{"base64 upper-cased", strings.ToUpper(token[:4]) + token[4:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "before " + tc.disguised + " after"
			out := r.String(in)
			if !strings.Contains(out, redact.Mask) || !strings.HasPrefix(out, "before ") || !strings.HasSuffix(out, " after") {
				t.Fatalf("String(%q) = %q; want the secret masked and the rest kept", in, out)
			}
			if f := r.Find(in); len(f) == 0 || f[0].Rule != redact.ConfiguredRule {
				t.Errorf("Find(%q) = %v; want the configured secret", in, f)
			}
		})
	}
}

// TestDisguiseLeavesOrdinaryTextAlone: the search for disguises masks
// nothing in text without the secret, whatever it holds.
func TestDisguiseLeavesOrdinaryTextAlone(t *testing.T) {
	r, err := redact.New(token)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"diff --git a/x b/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\r\n",
		"100% done; 50%25 off; a+b=c %zz %4",
		"\x1b[31mred\x1b[0m \u200bzero\ufeff",
		"ghp_\nZq8X",
		base64.StdEncoding.EncodeToString([]byte("x-access-token:other-token-value")),
	} {
		if out := r.String(s); out != s {
			t.Errorf("String(%q) = %q; want it unchanged", s, out)
		}
	}
}

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func wrap(s string, col int) string {
	var b strings.Builder
	for len(s) > col {
		b.WriteString(s[:col] + "\n")
		s = s[col:]
	}
	b.WriteString(s)
	return b.String()
}

// Disguises the fuzz test applies, by the first byte of how.
const (
	fuzzNewline = iota
	fuzzANSI
	fuzzZeroWidth
	fuzzPercent
	fuzzBase64
	fuzzKinds
)

var (
	fuzzEscapes    = []string{"\x1b[31m", "\x1b[0m", "\x1b[2K", "\x1b]0;t\x07", "\x1b]8;;http://x\x1b\\", "\u009b1m"}
	fuzzZeroWidths = []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
	fuzzBase64s    = []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
)

// FuzzDisguisedSecret checks that a configured secret (printable ASCII,
// as tokens and keys are) never survives redaction under any of the
// disguises, whatever text surrounds it: what the disguise inserted is
// taken out of the output again (or the encoding's core sought), and the
// secret must not be there.
func FuzzDisguisedSecret(f *testing.F) {
	for _, seed := range []struct {
		before, secret, after string
		how                   []byte
	}{
		{"token ", token, "\n", []byte{fuzzNewline, 10, 1}},
		{"", "sk-or-v1-0123456789abcdef", "", []byte{fuzzANSI, 3, 0, 12, 5}},
		{"x", "discord.token.value", "y", []byte{fuzzZeroWidth, 1, 2, 3, 4, 5, 6}},
		{"%4", "1a b+c/d%e", "", []byte{fuzzPercent, 1}},
		{"Basic ", "x-access-token:" + token, "", []byte{fuzzBase64, 0, 0}},
		{"", "secret-value", "", []byte{fuzzBase64, 2, 3, 'q', 'r'}},
	} {
		f.Add(seed.before, seed.secret, seed.after, seed.how)
	}
	f.Fuzz(func(t *testing.T, before, secret, after string, how []byte) {
		if len(secret) > 100 || len(before)+len(after) > 2000 || len(how) == 0 || !printableASCII(secret) || !configurable(secret) {
			return
		}
		r, err := redact.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		at := func(k int) int { // a position in the secret from how
			if k+1 < len(how) {
				return int(how[k+1]) % (len(secret) + 1)
			}
			return len(secret) / 2
		}
		var disguised string
		var reveal func(out string) string
		want := secret
		switch how[0] % fuzzKinds {
		case fuzzNewline:
			disguised = insertAt(secret, []int{at(0), at(1)}, []string{"\n", "\r\n"})
			reveal = func(s string) string { return strings.NewReplacer("\r", "", "\n", "").Replace(s) }
		case fuzzANSI:
			disguised = insertAt(secret, []int{at(0), at(2)}, []string{fuzzEscapes[at(1)%len(fuzzEscapes)], fuzzEscapes[at(3)%len(fuzzEscapes)]})
			reveal = redact.StripANSI
		case fuzzZeroWidth:
			var pos []int
			var ins []string
			for k := 0; k+1 < len(how) && k < 8; k++ {
				pos, ins = append(pos, at(k)), append(ins, fuzzZeroWidths[k%len(fuzzZeroWidths)])
			}
			disguised = insertAt(secret, pos, ins)
			reveal = func(s string) string {
				return strings.Map(func(r rune) rune {
					if strings.ContainsRune(strings.Join(fuzzZeroWidths, ""), r) {
						return -1
					}
					return r
				}, s)
			}
		case fuzzPercent:
			switch at(0) % 3 {
			case 0:
				disguised = url.QueryEscape(secret)
			case 1:
				disguised = url.PathEscape(secret)
			default:
				disguised = percentAll(secret)
			}
			reveal = percentDecode
			want = percentDecode(secret)
			if len(want) < 6 || strings.Contains(strings.ToLower(redact.Mask), strings.ToLower(want)) {
				return // too short to be sought once decoded
			}
		case fuzzBase64:
			prefix := ""
			for k := 2; k < len(how) && len(prefix) < at(0)%3; k++ {
				prefix += string(rune(how[k]%94 + 33))
			}
			enc := fuzzBase64s[at(1)%len(fuzzBase64s)]
			disguised = enc.EncodeToString([]byte(prefix + secret))
			a := len(prefix) % 3
			from, to := (8*a+5)/6, 8*(len(prefix)+len(secret))/6
			want = enc.EncodeToString([]byte(prefix + secret))[from+(len(prefix)/3)*4 : to+(len(prefix)/3)*4]
			reveal = func(s string) string { return s }
		}
		out := r.String(before + disguised + after)
		if strings.Contains(reveal(out), want) {
			t.Fatalf("secret %q disguised as %q survives in %q (revealed %q)", secret, disguised, out, reveal(out))
		}
	})
}

// insertAt inserts ins[k] at byte pos[k] of s (positions in s itself).
func insertAt(s string, pos []int, ins []string) string {
	type cut struct {
		at int
		s  string
	}
	var cuts []cut
	for k := range pos {
		cuts = append(cuts, cut{pos[k], ins[k]})
	}
	var b strings.Builder
	last := 0
	for len(cuts) > 0 {
		min := 0
		for k := range cuts {
			if cuts[k].at < cuts[min].at {
				min = k
			}
		}
		c := cuts[min]
		cuts = append(cuts[:min], cuts[min+1:]...)
		b.WriteString(s[last:c.at] + c.s)
		last = c.at
	}
	b.WriteString(s[last:])
	return b.String()
}

// percentDecode reads percent escapes and '+' as a space, leniently (a
// '%' without two hex digits stays), as a reader decoding by eye would.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b.WriteByte(' ')
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			var v byte
			fmt.Sscanf(s[i+1:i+3], "%02x", &v)
			if v == '+' {
				v = ' '
			}
			b.WriteByte(v)
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return utf8.ValidString(s)
}

// BenchmarkStringLarge is a megabyte of harness output: newlines, '%'
// and '+' on every line, so that the disguise skeletons are made.
func BenchmarkStringLarge(b *testing.B) {
	r, err := redact.New("sk-or-v1-0123456789abcdef0123456789abcdef", "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123", token)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("ok  \tgithub.com/fetch-dev/fetch/internal/agent\t23.975s 100% done, see https://example.com/a+b?x=%41\n")
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(s)
	}
}
