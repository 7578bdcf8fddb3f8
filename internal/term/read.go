package term

import (
	"bufio"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// line is one input line.
type line struct {
	// n is the line's number, from 1.
	n int
	// text is the line without its end, cleaned as chat.Clean cleans, at
	// most maxKept bytes of it.
	text string
	// chars is how many characters the whole cleaned line has.
	chars int
	// cut: text is not the whole line, which did not fit in maxKept.
	cut bool
	// err ends the input: io.EOF or the read error. The line carries
	// nothing else then.
	err error
}

// readLines reads lines from in and sends them on lines until the input
// ends (a last line carrying the error, io.EOF at the end) or done closes.
// With next not nil, it reads a line only when asked on next.
func readLines(in io.Reader, lines chan<- line, next <-chan struct{}, done <-chan struct{}) {
	br := bufio.NewReader(in)
	for n := 1; ; n++ {
		if next != nil {
			select {
			case <-next:
			case <-done:
				return
			}
		}
		l, err := readLine(br)
		l.n, l.err = n, err
		select {
		case lines <- l:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, without its end, and drops what chat.Clean
// drops (invalid bytes, control characters but tab; so a \r before the
// \n too). It keeps at most maxKept bytes of text and counts the
// characters of the whole line. The last line needs no end; io.EOF comes
// only when no byte of a line was left.
func readLine(br *bufio.Reader) (line, error) {
	var l line
	var b strings.Builder
	read := false
	for {
		r, size, err := br.ReadRune()
		if err != nil {
			if err == io.EOF && read {
				break
			}
			return line{}, err
		}
		read = true
		if r == '\n' {
			break
		}
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			continue
		}
		l.chars++
		if !l.cut && b.Len()+size <= maxKept {
			b.WriteRune(r)
		} else {
			l.cut = true
		}
	}
	l.text = b.String()
	return l, nil
}
