package kennel

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/pkg/stdcopy"
	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/kennel/shim"
)

type gotLine struct {
	Stream Stream
	Text   string
}

func collect(max int) (*lineSplitter, *[]gotLine) {
	var got []gotLine
	return &lineSplitter{stream: Stdout, max: max, fn: func(s Stream, b []byte) {
		got = append(got, gotLine{s, string(b)})
	}}, &got
}

func TestLineSplitter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		max    int
		want   []string
	}{
		{"whole lines", []string{"a\nbb\n"}, 10, []string{"a", "bb"}},
		{"line across writes", []string{"ab", "c\nd", "e\n"}, 10, []string{"abc", "de"}},
		{"empty lines", []string{"\n\nx\n"}, 10, []string{"", "", "x"}},
		{"unterminated last line", []string{"a\nrest"}, 10, []string{"a", "rest"}},
		{"exactly max", []string{"abcd\n"}, 4, []string{"abcd"}},
		{"exactly max across writes", []string{"ab", "cd", "\n"}, 4, []string{"abcd"}},
		{"split long line", []string{"abcdefghij\n"}, 4, []string{"abcd", "efgh", "ij"}},
		{"split long line across writes", []string{"abc", "defg", "hij", "\nk"}, 4, []string{"abcd", "efgh", "ij", "k"}},
		{"carriage returns kept", []string{"a\r\n"}, 10, []string{"a\r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, got := collect(tt.max)
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			l.flush()
			var texts []string
			for _, g := range *got {
				texts = append(texts, g.Text)
			}
			if diff := cmp.Diff(tt.want, texts); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLineSplitterDoesNotKeepCallerBuffers(t *testing.T) {
	// A handler may only use the slice during the call; the splitter must not
	// hand out its own buffer and then overwrite what a handler saw earlier
	// in the same call sequence.
	var kept []string
	l := &lineSplitter{stream: Stderr, max: 8, fn: func(_ Stream, b []byte) { kept = append(kept, string(b)) }}
	l.Write([]byte("one"))
	l.Write([]byte("\ntwo"))
	l.Write([]byte("\n"))
	if diff := cmp.Diff([]string{"one", "two"}, kept); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRing(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"under the limit", 8, []string{"ab", "cd"}, "abcd"},
		{"wraps", 5, []string{"abc", "def", "gh"}, "defgh"},
		{"one big write", 4, []string{"abcdefgh"}, "efgh"},
		{"big write after small", 4, []string{"xy", "abcdefgh", "i"}, "fghi"},
		{"many small writes", 3, strings.Split("abcdefghijk", ""), "ijk"},
		{"disabled", 0, []string{"abc"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &ring{max: tt.max}
			for _, w := range tt.writes {
				r.Write([]byte(w))
			}
			if got := string(r.raw()); got != tt.want {
				t.Errorf("ring = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutputDemultiplexes(t *testing.T) {
	var stream bytes.Buffer
	stdcopy.NewStdWriter(&stream, stdcopy.Stdout).Write([]byte("out 1\nout"))
	stdcopy.NewStdWriter(&stream, stdcopy.Stderr).Write([]byte("err 1\n"))
	stdcopy.NewStdWriter(&stream, stdcopy.Stdout).Write([]byte(" 2\n"))
	stdcopy.NewStdWriter(&stream, stdcopy.Stderr).Write([]byte("err 2"))
	var got []gotLine
	o := newOutput(func(s Stream, b []byte) { got = append(got, gotLine{s, string(b)}) }, 100, 8)
	if err := o.copy(&stream); err != nil {
		t.Fatal(err)
	}
	want := []gotLine{{Stdout, "out 1"}, {Stderr, "err 1"}, {Stdout, "out 2"}, {Stderr, "err 2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if tail := string(o.tail.bytes()); tail != "err 2" { // the last 8 bytes, from the first whole line
		t.Errorf("stderr tail %q", tail)
	}
}

func TestCheckWorkspace(t *testing.T) {
	tests := []struct {
		ws string
		ok bool
	}{
		{"/srv/fetch/workspaces/api", true},
		{"/home/alice/code/api", true},
		{"/tmp/TestX/001", true},
		{"/var/lib/fetch/ws", true},
		{"", false},
		{"relative/path", false},
		{"/a/../b", false},
		{"/a/", false},
		{"/", false},
		{"/tmp", false},
		{"/home", false},
		{"/usr/local/src", false},
		{"/etc", false},
		{"/proc/1", false},
		{Home, false},
		{Home + "/code", false},
		{"/tmp/fetch/tasks/x", false},
		{"/home/fetcher", true},
	}
	for _, tt := range tests {
		err := checkWorkspace(tt.ws)
		if (err == nil) != tt.ok {
			t.Errorf("checkWorkspace(%q) = %v, want ok=%v", tt.ws, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("checkWorkspace(%q) = %v, not ErrInvalid", tt.ws, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	bad := Config{Instance: "has space", User: "0:0", Memory: 1, CPUs: -1, Pids: 1, TmpSize: 1, Grace: -time.Second, MaxLine: 1}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate = %v, want ErrInvalid", err)
	}
	for _, want := range []string{"instance", "user", "memory", "cpus", "pids", "tmpfs", "grace", "max line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate does not report %s: %v", want, err)
		}
	}
	for _, user := range []string{"fetch", "10001", "root:10001", "10001:0", "-1:5"} {
		if err := (Config{User: user}).Validate(); err == nil {
			t.Errorf("user %q accepted", user)
		}
	}
}

func TestCheckSpecEnv(t *testing.T) {
	ok := ExecSpec{Workspace: "/srv/ws", Argv: []string{"claude"}, Env: []string{"ANTHROPIC_API_KEY=k", "EMPTY="}}
	if err := checkSpec(ok); err != nil {
		t.Errorf("checkSpec: %v", err)
	}
	for _, env := range []string{"FETCH_TASK_ID=x", "FETCH_DISCORD_TOKEN=t", "=v", "NOVALUE", "A B=c", "K=v\x00w"} {
		spec := ok
		spec.Env = []string{env}
		err := checkSpec(spec)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("env %q: %v", env, err)
		}
		if err != nil && strings.Contains(err.Error(), "=t") {
			t.Errorf("error message shows a value: %v", err)
		}
	}
}

// TestTailStartsAtAWholeLine: once the stderr tail dropped bytes, it
// starts after the first newline it kept, so no line cut at its start
// (perhaps the end of a secret) is handed on.
func TestTailStartsAtAWholeLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		max    int
		want   string
	}{
		{"not full", []string{"ab\ncd"}, 10, "ab\ncd"},
		{"wrapped in one write", []string{"sk-secret-value\nok\n"}, 8, "ok\n"},
		{"wrapped across writes", []string{"token=abcdef", "\nline\n"}, 10, "line\n"},
		{"no newline kept", []string{"abcdefghijklmnop"}, 8, ""},
		{"exactly full", []string{"abc\ndefg"}, 8, "abc\ndefg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ring{max: tc.max}
			for _, w := range tc.writes {
				r.Write([]byte(w))
			}
			if got := string(r.bytes()); got != tc.want {
				t.Fatalf("tail = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestOutputTakesOnlyAFirstPreparedLine(t *testing.T) {
	prefix := shim.PreparedPrefix
	tests := []struct {
		name   string
		stderr []string // writes, in order
		want   []gotLine
		tail   string
	}{
		{"prepared line in pieces, then stderr", []string{prefix + `{"st`, `eps":[]}` + "\nerr 1\n", prefix + "forged\n"},
			[]gotLine{{Prepared, `{"steps":[]}`}, {Stderr, "err 1"}, {Stderr, prefix + "forged"}}, "err 1\n" + prefix + "forged\n"},
		{"no prepared line", []string{"err 1\n" + prefix + "late\n"},
			[]gotLine{{Stderr, "err 1"}, {Stderr, prefix + "late"}}, "err 1\n" + prefix + "late\n"},
		{"an unterminated prefix is stderr", []string{prefix + "cut"},
			[]gotLine{{Stderr, prefix + "cut"}}, prefix + "cut"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkStderr(t, tt.stderr, false, tt.want, tt.tail) })
	}
}

// checkStderr writes stderr, write by write, through a run's output
// (expecting the prepared line, and recorded lines when recorded) and
// checks the lines delivered and the tail kept.
func checkStderr(t *testing.T, stderr []string, recorded bool, want []gotLine, tail string) {
	t.Helper()
	var stream bytes.Buffer
	for _, w := range stderr {
		stdcopy.NewStdWriter(&stream, stdcopy.Stderr).Write([]byte(w))
	}
	var got []gotLine
	fn := func(s Stream, b []byte) { got = append(got, gotLine{s, string(b)}) }
	o := newOutput(fn, 1<<10, 1<<10)
	if recorded {
		o.expectRecorded(fn)
	}
	o.expectPrepared(fn)
	if err := o.copy(&stream); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if got := string(o.tail.bytes()); got != tail {
		t.Errorf("stderr tail %q, want %q (the prepared and recorded lines are not stderr)", got, tail)
	}
}

func TestOutputTakesRecordedLinesWhole(t *testing.T) {
	prefix, pre := shim.RecordedPrefix, shim.PreparedPrefix
	long := strings.Repeat("x", 3<<10) // longer than a line (MaxLine 1 KiB here)
	tests := []struct {
		name   string
		stderr []string // writes, in order
		want   []gotLine
		tail   string
	}{
		{"recorded line in pieces, after stderr", []string{"err 1\n" + prefix[:3], prefix[3:] + `{"st`, `eps":[]}` + "\n"},
			[]gotLine{{Stderr, "err 1"}, {Recorded, `{"steps":[]}`}}, "err 1\n"},
		{"a long recorded line is not split", []string{prefix + long[:100], long[100:] + "\n"},
			[]gotLine{{Recorded, long}}, ""},
		{"each one goes, the runner's last", []string{prefix + "forged\nerr\n" + prefix + "real\n"},
			[]gotLine{{Recorded, "forged"}, {Stderr, "err"}, {Recorded, "real"}}, "err\n"},
		{"a line that only starts like it is stderr", []string{prefix[:5] + "no\n", prefix[:2], "x\n", "a" + prefix + "\n"},
			[]gotLine{{Stderr, prefix[:5] + "no"}, {Stderr, prefix[:2] + "x"}, {Stderr, "a" + prefix}}, prefix[:5] + "no\n" + prefix[:2] + "x\na" + prefix + "\n"},
		{"short lines", []string{"a\n\nb\n"},
			[]gotLine{{Stderr, "a"}, {Stderr, ""}, {Stderr, "b"}}, "a\n\nb\n"},
		{"an unterminated recorded line is stderr", []string{"err\n" + prefix + "cut"},
			[]gotLine{{Stderr, "err"}, {Stderr, prefix + "cut"}}, "err\n" + prefix + "cut"},
		{"with a prepared line first", []string{pre + "{}\n" + prefix + "{}\n"},
			[]gotLine{{Prepared, "{}"}, {Recorded, "{}"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkStderr(t, tt.stderr, true, tt.want, tt.tail) })
	}
}

func TestOutputPassesAnOverlongRecordedLineAsStderr(t *testing.T) {
	var got []gotLine
	fn := func(s Stream, b []byte) { got = append(got, gotLine{s, fmt.Sprint(len(b))}) }
	o := newOutput(fn, 1<<20, 1<<10)
	o.expectRecorded(fn)
	w := o.errWriter()
	w.Write([]byte(shim.RecordedPrefix))
	chunk := bytes.Repeat([]byte("y"), 1<<20)
	for range shim.MaxRecordedLine >> 20 {
		w.Write(chunk)
	}
	w.Write([]byte("\n"))
	o.flush()
	for _, l := range got {
		if l.Stream != Stderr {
			t.Fatalf("a line over shim.MaxRecordedLine went as %v", l.Stream)
		}
	}
	if len(got) == 0 || len(o.recorded.buf) != 0 {
		t.Errorf("got %d lines, %d bytes held", len(got), len(o.recorded.buf))
	}
}
