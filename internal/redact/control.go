package redact

import (
	"strings"
	"unicode/utf8"
)

// StripControl makes text from the world inert on a terminal: it removes
// escape sequences whole (CSI such as colours and screen clears; OSC such
// as titles, hyperlinks and OSC 52 clipboard writes; DCS, SOS, PM and APC
// strings, each up to its terminator or the end of the text), the 8-bit
// C1 forms of the same, lone escapes, every other C0 and C1 control
// character but newline and tab (carriage return and backspace among
// them: they overwrite what was shown), DEL, the bidirectional overrides
// and isolates that reorder what is shown (U+202A–U+202E, U+2066–U+2069),
// and bytes that are not UTF-8. What is left is printable text, and
// StripControl of it is itself.
//
// StripANSI removes only escape sequences and keeps the other controls;
// StripControl is for text a person reads on a terminal or in a commit
// message.
func StripControl(s string) string {
	if inert(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			i++
		case r == 0x1b:
			i = skipEscape(s, i+1)
		case r == 0x9b: // CSI
			i = skipCSI(s, i+n)
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // DCS, SOS, OSC, PM, APC
			i = skipString(s, i+n)
		case dropped(r):
			i += n
		default:
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// inert tells text that StripControl leaves as it is.
func inert(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x1b || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || dropped(r) {
			return false
		}
		i += n
	}
	return true
}

// dropped tells a character removed on its own: controls other than
// newline and tab, and the bidirectional overrides and isolates.
func dropped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// skipEscape returns where the escape sequence whose ESC ends before j
// ends.
func skipEscape(s string, j int) int {
	if j >= len(s) {
		return j
	}
	switch c := s[j]; {
	case c == '[':
		return skipCSI(s, j+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, j+1)
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	case c >= 0x30 && c <= 0x7e:
		return j + 1
	}
	// ESC before a control or a non-ASCII character: a lone ESC.
	return j
}

// skipCSI returns where the control sequence whose introducer ends before
// j ends: parameter and intermediate bytes, then a final byte. A control
// or non-ASCII character aborts it, as it does on a terminal.
func skipCSI(s string, j int) int {
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
		j++
	}
	if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
		j++
	}
	return j
}

// skipString returns where the control string (OSC, DCS, …) whose
// introducer ends before j ends: after BEL or ST (ESC \ or U+009C), after
// CAN or SUB (which cancel it), before an ESC that starts another
// sequence, or at the end of the text.
func skipString(s string, j int) int {
	for j < len(s) {
		switch c := s[j]; {
		case c == 0x07 || c == 0x18 || c == 0x1a:
			return j + 1
		case c == 0x1b:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			return j
		case c == 0xc2 && j+1 < len(s) && s[j+1] == 0x9c:
			return j + 2
		}
		j++
	}
	return j
}
