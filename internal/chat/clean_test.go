package chat_test

import (
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"hello":                              "hello",
		"line\nnext\ttab":                    "line\nnext\ttab",
		"bell\a and nul\x00 and esc\x1b[31m": "bell and nul and esc[31m",
		"cr\r\nlf":                           "cr\nlf",
		"bad\xffutf8":                        "badutf8",
		"del\x7f":                            "del",
		"c1\u0085x":                          "c1x",
		"émoji 🐕":                            "émoji 🐕",
	} {
		if got := chat.Clean(in); got != want {
			t.Errorf("Clean(%q) = %q; want %q", in, got, want)
		}
	}
}

func FuzzClean(f *testing.F) {
	f.Add("hello\x00world")
	f.Fuzz(func(t *testing.T, s string) {
		out := chat.Clean(s)
		if chat.Clean(out) != out {
			t.Fatalf("not idempotent: %q", s)
		}
	})
}
