package kennel

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSanitizeCutsBetweenCharacters: a long version line is cut at a
// character's start, so what is shown stays valid UTF-8.
func TestSanitizeCutsBetweenCharacters(t *testing.T) {
	for _, pad := range []int{0, 1, 2} {
		in := strings.Repeat("a", pad) + strings.Repeat("é", maxVersionLen)
		got := sanitize(in)
		if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > maxVersionLen+len("…") {
			t.Errorf("sanitize(%d a's + é's) = %q", pad, got)
		}
	}
}
