package redact

import "regexp"

// ansi matches terminal escape sequences: CSI (colours, cursor moves), OSC
// (titles, hyperlinks) terminated by BEL or ST, and two-character escapes.
var ansi = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]`)

// StripANSI removes terminal escape sequences from s (harness output), so
// that colours and cursor moves do not reach the chat as garbage and
// cannot split a secret the redactor would otherwise see.
func StripANSI(s string) string {
	if !containsEscape(s) {
		return s
	}
	return ansi.ReplaceAllString(s, "")
}

func containsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			return true
		}
	}
	for _, r := range s {
		if r == 0x9b {
			return true
		}
	}
	return false
}
