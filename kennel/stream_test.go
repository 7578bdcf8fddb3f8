package kennel_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/kennel"
)

func TestExecRawStreamsRoundTripBinary(t *testing.T) {
	e := newEnv(t)
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	for i := 0; i < len(data); i += 4096 {
		data[i] = 0 // NUL bytes for sure
	}
	data[len(data)-1] = 'x' // no trailing newline
	var got bytes.Buffer
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:   []string{"sh", "-c", "cat; echo on-stderr >&2"},
		Stdin:  bytes.NewReader(data),
		Stdout: &got,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v (stderr %q)", res, err, res.StderrTail)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Errorf("stdout: %d bytes, want the %d bytes of stdin", got.Len(), len(data))
	}
	if len(l.out()) != 0 || !slices.Equal(l.err(), []string{"on-stderr"}) {
		t.Errorf("the line handler saw stdout %d lines, stderr %q; want stderr only", len(l.out()), l.err())
	}
}

func TestExecStdinToLines(t *testing.T) {
	e := newEnv(t)
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:   []string{"cat"},
		Stdin:  strings.NewReader("one\ntwo\nthree"),
		TaskID: newTaskID(),
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"one", "two", "three"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestExecStdinNotReadIsFine(t *testing.T) {
	e := newEnv(t)
	// The program ends without reading a large stdin.
	res, _, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:  []string{"true"},
		Stdin: io.LimitReader(zeros{}, 64<<20),
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
}

var errSink = errors.New("sink full")

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errSink
	}
	w.n -= len(p)
	return len(p), nil
}

func TestExecStdoutWriteErrorStopsTheRun(t *testing.T) {
	e := newEnv(t)
	mark := "endless-" + newTaskID()
	// An endless writer: only the failed write can end it.
	res, _, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:   []string{"sh", "-c", "cat /dev/zero; : " + mark},
		Stdout: &failingWriter{n: 1 << 20},
	})
	if !errors.Is(err, errSink) {
		t.Fatalf("err = %v (result %+v), want the writer's error", err, res)
	}
	if left := e.processesMatching(mark); len(left) > 0 {
		t.Errorf("processes left after the failed write: %q", left)
	}
	// The kennel still runs things afterwards.
	if res, _ := e.mustExec("true"); res.ExitCode != 0 {
		t.Errorf("next run: %+v", res)
	}
}

var errSource = errors.New("source broke")

// brokenReader yields n zero bytes, then fails.
type brokenReader struct{ n int }

func (r *brokenReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errSource
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

func TestExecStdinReadErrorStopsTheRun(t *testing.T) {
	e := newEnv(t)
	var got bytes.Buffer
	res, _, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:   []string{"cat"},
		Stdin:  &brokenReader{n: 1000},
		Stdout: &got,
	})
	if !errors.Is(err, errSource) {
		t.Fatalf("err = %v (result %+v), want the reader's error", err, res)
	}
	if !res.Stopped {
		t.Errorf("result %+v: want Stopped", res)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
