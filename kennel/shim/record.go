package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// A run's Record program (run --record JSON) is a Batch the runner runs
// after its child ended, however it ended, and after the task's leftovers
// are gone and their output drained: Fetch's own work after a run (commit
// what the CLI left, bundle the branch) costs no exec of its own. Its
// steps run as the runner's children, outside the task's process group
// and without its tag, with the program's Env as their environment.
//
// The result is written as the run's last stderr line: RecordedPrefix and
// the BatchResult as JSON. Nothing of the task's writes after it, in the
// live stream or in the log; a line the CLI printed with the same prefix
// comes before it, so the last one is the runner's. (A CLI that killed its
// runner can leave a forged line last: what reads it treats the line as
// untrusted, as it treats anything the kennel wrote.)
//
// When the child was a prepare (its first stderr line is the prepared
// line), the program runs only if the prepare's steps all passed, and
// "${name}" in its steps is replaced by the prepare's captures (Vars):
// the task's base commit, which only the run's own exec knows.
const RecordedPrefix = "fetch-shim recorded: "

// MaxRecordedLine bounds the recorded line: the program's stdout
// (MaxBatchStdout, base64 for a binary step) and its steps' stderr
// tails, as JSON.
const MaxRecordedLine = 16 << 20

// recordTimeout bounds a run's Record program; stop waits that much
// longer for a runner that records (PidRecord.Records).
const recordTimeout = time.Minute

// maxPreparedLine bounds the first stderr line the runner keeps to read
// a prepare's captures.
const maxPreparedLine = 1 << 20

// RecordProgram is b as run's --record takes it (RunOptions.Record).
func RecordProgram(b Batch) (string, error) {
	if err := b.check(); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	program, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	return string(program), nil
}

// parseRecord reads run's --record program.
func parseRecord(program string) (*Batch, error) {
	var b Batch
	dec := json.NewDecoder(bytes.NewReader([]byte(program)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("record: read the program: %w", err)
	}
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return &b, nil
}

// firstLine keeps the first line of what is written to it (up to
// maxPreparedLine bytes): the child's first stderr line.
type firstLine struct {
	buf  []byte
	done bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if f.done {
		return len(p), nil
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		p, f.done = p[:i+1], true
	}
	if len(f.buf)+len(p) > maxPreparedLine {
		f.buf, f.done = nil, true // too long to be the prepared line
		return len(p), nil
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// prepared reads the kept line: whether it was a prepared line, and then
// whether its steps passed and what they captured.
func (f *firstLine) prepared() (isPrepared, ok bool, vars map[string]string) {
	line, complete := bytes.CutSuffix(f.buf, []byte("\n"))
	rest, found := bytes.CutPrefix(line, []byte(PreparedPrefix))
	if !complete || !found {
		return false, false, nil
	}
	var res BatchResult
	if err := json.Unmarshal(rest, &res); err != nil {
		return true, false, nil
	}
	return true, res.OK, res.Vars
}

// record runs the Record program b after the child, with the captures of
// its prepare when it had one, and writes the recorded line to w and the
// log. It writes nothing when the prepare failed (there is nothing of the
// run's to record).
func record(ctx context.Context, b *Batch, first *firstLine, lw *logWriter, w io.Writer) error {
	isPrepared, ok, vars := first.prepared()
	if isPrepared && !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	res, _ := b.run(ctx, vars)
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	var msg bytes.Buffer
	msg.Grow(len(RecordedPrefix) + len(line) + 1)
	msg.WriteString(RecordedPrefix)
	msg.Write(line)
	msg.WriteByte('\n')
	wOK := true // a failing w (the exec's reader went away) does not stop the log
	for p := msg.Bytes(); len(p) > 0; {
		n := min(len(p), copyBuffer) // one frame per piece, as the copiers write
		if lw != nil {
			_ = lw.writeFrame(Stderr, p[:n])
		}
		if wOK {
			_, err := w.Write(p[:n])
			wOK = err == nil
		}
		p = p[n:]
	}
	return nil
}
