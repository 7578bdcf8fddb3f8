package chat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean removes control characters other than newline and tab (and
// invalid UTF-8) from inbound text, before anything else sees it.
func Clean(text string) string {
	clean := true
	for _, r := range text {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
