package kennel

import (
	"bytes"
	"io"

	"github.com/docker/docker/pkg/stdcopy"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// Stream tells stdout from stderr.
type Stream int

// Streams.
const (
	Stdout Stream = 1
	Stderr Stream = 2
	// Prepared carries, once and before any other line, the result of
	// ExecSpec.Prepare's steps: a shim.BatchResult as JSON. Follow
	// delivers it too, from the log, for a run that had one.
	Prepared Stream = 3
	// Recorded carries the result of ExecSpec.Record's program, a
	// shim.BatchResult as JSON, after everything the run's CLI printed
	// (Follow delivers it too). A CLI can print such a line itself, which
	// comes earlier: the last one is the runner's, unless the CLI killed
	// its runner. It is kennel output like any other: untrusted.
	Recorded Stream = 4
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case Prepared:
		return "prepared"
	case Recorded:
		return "recorded"
	default:
		return "stream?"
	}
}

// LineHandler receives output line by line (without the trailing newline),
// sequentially from one goroutine; the slice is valid only during the call.
// Over-long lines are split at a bounded size (Config.MaxLine). A handler that
// blocks holds the run up: output is not buffered without bound. So a handler
// must not call Stop for its own run and wait for it: the stop waits for the
// wrapper, which may wait for the handler to take its last output; cancel the
// run's context from another goroutine instead.
type LineHandler func(stream Stream, line []byte)

// output demultiplexes an exec's stream into lines for a LineHandler and keeps
// the tail of stderr. Its memory is bounded by two line buffers and the tail.
type output struct {
	stdout, stderr lineSplitter
	tail           ring
	// first, when set, takes stderr until its first line is known: the
	// prepared line (shim.PreparedPrefix) of a run with a Prepare.
	first *firstLine
	// recorded, when set, takes the recorded lines (shim.RecordedPrefix)
	// out of stderr, after first.
	recorded *recordedLines
}

func newOutput(fn LineHandler, maxLine, tail int) *output {
	if fn == nil {
		fn = func(Stream, []byte) {}
	}
	return &output{
		stdout: lineSplitter{stream: Stdout, fn: fn, max: maxLine},
		stderr: lineSplitter{stream: Stderr, fn: fn, max: maxLine},
		tail:   ring{max: tail},
	}
}

// expectPrepared makes the first stderr line, when it is the shim's
// prepared line, a Prepared line of its own (its prefix removed), kept out
// of stderr and its tail.
func (o *output) expectPrepared(fn LineHandler) {
	if fn == nil {
		fn = func(Stream, []byte) {}
	}
	o.first = &firstLine{fn: fn, next: o.afterFirst()}
}

// expectRecorded makes each stderr line that starts with the shim's
// recorded prefix a Recorded line of its own (its prefix removed), kept
// whole (up to shim.MaxRecordedLine) and out of stderr and its tail. Call
// it before expectPrepared.
func (o *output) expectRecorded(fn LineHandler) {
	if fn == nil {
		fn = func(Stream, []byte) {}
	}
	o.recorded = &recordedLines{fn: fn, next: io.MultiWriter(&o.stderr, &o.tail)}
}

// afterFirst is where stderr goes after its first line.
func (o *output) afterFirst() io.Writer {
	if o.recorded != nil {
		return o.recorded
	}
	return io.MultiWriter(&o.stderr, &o.tail)
}

// errWriter is where stderr goes.
func (o *output) errWriter() io.Writer {
	if o.first != nil {
		return o.first
	}
	return o.afterFirst()
}

// copy reads a multiplexed stream (Docker's stdcopy framing) to its end and
// delivers the last, unterminated lines.
func (o *output) copy(r io.Reader) error {
	_, err := stdcopy.StdCopy(&o.stdout, o.errWriter(), r)
	o.flush()
	return err
}

// flush delivers what is pending at the end of the stream.
func (o *output) flush() {
	o.stdout.flush()
	if o.first != nil {
		o.first.flush()
	}
	if o.recorded != nil {
		o.recorded.flush()
	}
	o.stderr.flush()
}

// maxPreparedLine bounds the prepared line; a longer first line is
// ordinary stderr.
const maxPreparedLine = 1 << 20

// firstLine holds back a stream's first line: the shim's prepared line
// goes to fn as Prepared; anything else, and everything after it, to next.
type firstLine struct {
	fn   LineHandler
	next io.Writer
	buf  []byte
	done bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if f.done {
		return f.next.Write(p)
	}
	n := len(p)
	i := bytes.IndexByte(p, '\n')
	if i < 0 && len(f.buf)+len(p) <= maxPreparedLine {
		f.buf = append(f.buf, p...)
		return n, nil
	}
	if i < 0 {
		i = len(p) - 1 // too long to be the prepared line
	}
	f.buf = append(f.buf, p[:i+1]...)
	f.release()
	if _, err := f.next.Write(p[i+1:]); err != nil {
		return n, err
	}
	return n, nil
}

// release delivers the held line, as Prepared when it is the prepared line.
func (f *firstLine) release() {
	f.done = true
	line := bytes.TrimSuffix(f.buf, []byte("\n"))
	if rest, ok := bytes.CutPrefix(line, []byte(shim.PreparedPrefix)); ok && len(line) < len(f.buf) {
		f.fn(Prepared, rest)
	} else {
		_, _ = f.next.Write(f.buf)
	}
	f.buf = nil
}

// flush delivers a first line the stream ended in (it is not the prepared
// line, which ends with a newline).
func (f *firstLine) flush() {
	if !f.done && len(f.buf) > 0 {
		f.release()
	}
}

// recordedLines passes a stream on to next, except for its lines that
// start with shim.RecordedPrefix: each goes whole to fn as Recorded. Its
// memory is bounded by one such line.
type recordedLines struct {
	fn   LineHandler
	next io.Writer
	// buf holds the start of the current line while it may still be a
	// recorded line, or the recorded line being gathered.
	buf   []byte
	state recordedState
}

// recordedState is where recordedLines is in the current line.
type recordedState int

const (
	deciding  recordedState = iota // what buf holds matches the prefix so far
	passing                        // not a recorded line: passed on as it comes
	gathering                      // a recorded line, gathered in buf
)

func (r *recordedLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		seg := p // the current line's part in p, with its newline
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			seg = p[:i+1]
		}
		p = p[len(seg):]
		if err := r.segment(seg); err != nil {
			return n, err
		}
		if seg[len(seg)-1] == '\n' {
			if err := r.endLine(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// segment takes the next part of the current line.
func (r *recordedLines) segment(seg []byte) error {
	switch r.state {
	case passing:
		_, err := r.next.Write(seg)
		return err
	case gathering:
		if len(r.buf)+len(seg) > shim.MaxRecordedLine {
			return r.pass(seg) // too long for the runner's line: ordinary output
		}
		r.buf = append(r.buf, seg...)
		return nil
	}
	r.buf = append(r.buf, seg...)
	k := min(len(r.buf), len(shim.RecordedPrefix))
	switch {
	case string(r.buf[:k]) != shim.RecordedPrefix[:k]:
		return r.pass(nil)
	case k == len(shim.RecordedPrefix):
		r.state = gathering
	}
	return nil
}

// endLine ends the current line: a recorded one goes to fn, one too short
// to be told goes on.
func (r *recordedLines) endLine() error {
	var err error
	switch {
	case r.state == gathering:
		r.fn(Recorded, r.buf[len(shim.RecordedPrefix):len(r.buf)-1])
	case r.state == deciding && len(r.buf) > 0:
		err = r.pass(nil)
	}
	r.buf, r.state = r.buf[:0], deciding
	return err
}

// pass sends what was held back, then seg, on as ordinary output; the rest
// of the current line follows them.
func (r *recordedLines) pass(seg []byte) error {
	held := r.buf
	r.buf, r.state = r.buf[:0], passing
	if _, err := r.next.Write(held); err != nil {
		return err
	}
	if len(seg) == 0 {
		return nil
	}
	_, err := r.next.Write(seg)
	return err
}

// flush passes on a line the stream ended in (the recorded line ends
// with a newline).
func (r *recordedLines) flush() {
	if len(r.buf) > 0 {
		_ = r.pass(nil)
	}
}

// lineSplitter is an io.Writer that calls fn for every line. A line longer than
// max is delivered in pieces of max bytes.
type lineSplitter struct {
	stream Stream
	fn     LineHandler
	max    int
	buf    []byte // the start of a line not yet terminated
}

func (l *lineSplitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.add(p)
			break
		}
		if len(l.buf) == 0 && i <= l.max {
			l.fn(l.stream, p[:i]) // whole line in p: no copy
		} else {
			l.add(p[:i])
			l.emit()
		}
		p = p[i+1:]
	}
	return n, nil
}

// add appends to the pending line, delivering full pieces of max bytes when it
// would grow beyond max.
func (l *lineSplitter) add(p []byte) {
	for len(l.buf)+len(p) > l.max {
		room := l.max - len(l.buf)
		l.buf = append(l.buf, p[:room]...)
		p = p[room:]
		l.emit()
	}
	l.buf = append(l.buf, p...)
}

func (l *lineSplitter) emit() {
	l.fn(l.stream, l.buf)
	l.buf = l.buf[:0]
}

// flush delivers an unterminated last line.
func (l *lineSplitter) flush() {
	if len(l.buf) > 0 {
		l.emit()
	}
}

// ring keeps the last max bytes written to it.
type ring struct {
	max   int
	buf   []byte
	start int // index of the oldest byte once buf is full
	// cut: bytes were dropped, so the oldest line kept is partial.
	cut bool
}

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	if r.max <= 0 {
		return n, nil
	}
	if len(p) >= r.max {
		r.cut = r.cut || len(p) > r.max || len(r.buf) > 0
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		r.start = 0
		return n, nil
	}
	if room := r.max - len(r.buf); room > 0 {
		k := min(room, len(p))
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes
		r.cut = true
		k := copy(r.buf[r.start:], p)
		p = p[k:]
		r.start = (r.start + k) % r.max
	}
	return n, nil
}

// raw returns a copy of the kept bytes, oldest first.
func (r *ring) raw() []byte {
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}

// bytes returns a copy of the kept bytes, oldest first, from the first
// whole line: a line cut at its start could hold the end of a secret that
// the redactor downstream no longer recognises.
func (r *ring) bytes() []byte {
	out := r.raw()
	if r.cut {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			return nil
		}
		out = out[i+1:]
	}
	return out
}
