package redact

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible shows what a reader would not see: every character that is
// invisible or moves what is shown — control characters but newline and
// tab (carriage return, backspace, escape among them), format characters
// (Unicode category Cf: the bidirectional overrides, embeddings and
// isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and
// U+061C, the zero-width characters U+200B–U+200D, U+2060–U+2064, U+FEFF,
// the soft hyphen, the tag characters), the line and paragraph separators,
// spaces other than U+0020, and characters that draw nothing (variation
// selectors, the combining grapheme joiner, the Hangul fillers) and
// private-use characters — becomes
// its code point, ⟨U+202E⟩; a byte that is not UTF-8 becomes ⟨0xFF⟩.
// What is left is exactly the text, and Visible of it is itself.
//
// Visible is for what the owner approves: a command, a file path, a diff
// that a coding CLI asks to run or write must be shown as it would run,
// not as a terminal or Discord would render it (a right-to-left override
// can show "rm -rf ~/x" for text that does something else). StripControl,
// which removes such characters, is for text that is only read.
func Visible(s string) string {
	if !hasHidden(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case hidden(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func hasHidden(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c != '\n' && c != '\t' && (c < 0x20 || c == 0x7f) {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || hidden(r) {
			return true
		}
		i += n
	}
	return false
}

// hidden tells a character Visible spells out.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r < utf8.RuneSelf:
		return false
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs, unicode.Co):
		return true
	case r == 0x034f, // combining grapheme joiner
		r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0, // Hangul fillers
		r == 0x17b4 || r == 0x17b5,                               // Khmer inherent vowels
		r >= 0x180b && r <= 0x180f,                               // Mongolian variation selectors
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, // variation selectors
		r == 0x2800: // Braille blank
		return true
	}
	return false
}
