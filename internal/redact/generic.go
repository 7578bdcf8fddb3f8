package redact

import (
	"strings"
	"unicode/utf8"
)

// genericRule is gitleaks' catch-all rule for "key = value" assignments.
// Its regular expression is the costliest of the set (tens of µs on a
// short reply that merely mentions a key or a token), and it runs on
// every text Fetch stores or sends that holds one of its keywords.
const genericRule = "generic-api-key"

// assignmentAfterKeyword is a necessary condition for genericRule to
// match, checked without the regular expression: somewhere in lower, one
// of the rule's keywords is followed by what the rule requires before its
// value —
//
//	(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)
//
// that is, up to 20 word characters, blanks, dots or dashes, then up to 3
// blanks or quotes, then an operator, which starts with one of = > : | ?
// and ,. When it does not hold, the rule cannot match and need not run.
// It errs towards true (a keyword that the expression's case rules would
// not take, such as "aPi", still counts).
func assignmentAfterKeyword(lower string, keywords []string) bool {
	for _, k := range keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			end := from + i + len(k)
			if operatorFollows(lower, end) {
				return true
			}
			from = from + i + 1
		}
	}
	return false
}

// operatorFollows tells whether, from byte at, up to 20 runes of
// [ \t\w.-] and then up to 3 of [\s'"] can lead to an operator's first
// byte.
func operatorFollows(s string, at int) bool {
	i := at
	for n := 0; ; n++ {
		if blanksThenOperator(s, i) {
			return true
		}
		if n == 20 || i >= len(s) {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !wordish(r) {
			return false
		}
		i += size
	}
}

// blanksThenOperator: up to 3 of [\s'"] from i, then an operator's first
// byte.
func blanksThenOperator(s string, i int) bool {
	for n := 0; i < len(s); n++ {
		switch s[i] {
		case '=', '>', ':', '|', '?', ',':
			return true
		case ' ', '\t', '\n', '\r', '\v', '\f', '\'', '"':
			if n == 3 {
				return false
			}
			i++
		default:
			return false
		}
	}
	return false
}

// wordish is [ \t\w.-] as the rule's (?i) reads it: Go's \w is ASCII, and
// case folding adds ſ (U+017F) and the Kelvin sign (U+212A).
func wordish(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r == '_', r == ' ', r == '\t', r == '.', r == '-', r == '\u017f', r == '\u212a':
		return true
	}
	return false
}
