package redact_test

import (
	"testing"

	"github.com/fetch-dev/fetch/internal/redact"
)

func TestStripControl(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "fix the bug\n\tnow", "fix the bug\n\tnow"},
		{"colour", "\x1b[31mred\x1b[0m text", "red text"},
		{"screen clear", "\x1b[2J\x1b[Hhello", "hello"},
		{"osc 52 clipboard bel", "a\x1b]52;c;cm0gLXJmIC8=\x07b", "ab"},
		{"osc 52 clipboard st", "a\x1b]52;c;cm0gLXJmIC8=\x1b\\b", "ab"},
		{"osc title unterminated", "goal\x1b]0;pwned", "goal"},
		{"osc hyperlink", "\x1b]8;;https://evil\x07link\x1b]8;;\x07", "link"},
		{"dcs", "x\x1bPq#0;2;0;0;0\x1b\\y", "xy"},
		{"apc", "x\x1b_hidden\x1b\\y", "xy"},
		{"8-bit csi", "x\u009b31my", "xy"},
		{"8-bit osc", "x\u009d0;t\u009cy", "xy"},
		{"lone esc at end", "x\x1b", "x"},
		{"esc before newline", "x\x1b\ny", "x\ny"},
		{"two-char escape", "x\x1bcy", "xy"},
		{"charset escape", "x\x1b(By", "xy"},
		{"carriage return", "safe\rrm -rf /", "saferm -rf /"},
		{"backspace bell nul del", "a\bb\x07c\x00d\x7fe", "abcde"},
		{"bidi override", "admin\u202e\u2066 txet", "admin txet"},
		{"invalid utf8", "a\xffb\xc3", "ab"},
		{"unicode kept", "é 🐕 日本 \ufffd", "é 🐕 日本 \ufffd"},
		{"osc cut by another sequence", "\x1b]0;t\x1b[31mx", "x"},
		{"csi aborted by newline", "\x1b[3\nx", "\nx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redact.StripControl(tc.in)
			if got != tc.want {
				t.Errorf("StripControl(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := redact.StripControl(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}
