package term

import (
	"bufio"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
)

func TestReadLineCleansAsChatClean(t *testing.T) {
	for _, s := range []string{
		"plain",
		"tab\there",
		"nul\x00 bell\a esc\x1b[31m red",
		"bad \xff\xfe bytes and a cut rune \xe6\x97",
		"replacement \ufffd char",
		"crlf\r",
		"日本語 and emoji 🐕",
	} {
		l, err := readLine(bufio.NewReader(strings.NewReader(s + "\nnext")))
		want := chat.Clean(strings.TrimSuffix(s, "\r"))
		if err != nil || l.text != want || l.chars != len([]rune(want)) || l.cut {
			t.Errorf("readLine(%q) = %+v, %v; want text %q", s, l, err, want)
		}
	}
}

// repeating is an endless reader of one byte.
type repeating byte

func (r repeating) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestReadLineMemoryIsBounded(t *testing.T) {
	const size = 8 << 20
	br := bufio.NewReader(io.MultiReader(io.LimitReader(repeating('z'), size), strings.NewReader("\n")))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := readLine(br)
	runtime.ReadMemStats(&after)
	if err != nil || !l.cut || l.chars != size || len(l.text) > maxKept {
		t.Fatalf("cut=%v chars=%d kept=%d err=%v", l.cut, l.chars, len(l.text), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*maxKept {
		t.Fatalf("reading a %d-byte line allocated %d bytes", size, alloc)
	}
}
