package shim

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidTaskID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"t1", true},
		{"task-01.retry_2", true},
		{"A", true},
		{"", false},
		{".hidden", false},
		{"-flag", false},
		{"a/b", false},
		{"../x", false},
		{"a b", false},
		{"a\x00b", false},
		{string(bytes.Repeat([]byte("x"), 128)), true},
		{string(bytes.Repeat([]byte("x"), 129)), false},
	}
	for _, tt := range tests {
		if got := ValidTaskID(tt.id); got != tt.want {
			t.Errorf("ValidTaskID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    proc
		wantErr bool
	}{
		{"plain", "42 (sleep) S 1 42 42 0 -1 4194560 100", proc{pid: 42, ppid: 1, state: 'S', pgid: 42}, false},
		{"spaces and parens in name", "77 (a) b (c)) Z 5 70 70 0", proc{pid: 77, ppid: 5, state: 'Z', pgid: 70}, false},
		{"no name", "77 S 5 70", proc{}, true},
		{"truncated", "77 (x) S 5", proc{}, true},
		{"bad pgrp", "77 (x) S 5 x", proc{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(proc{})); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvValue(t *testing.T) {
	env := []byte("PATH=/bin\x00FETCH_TASK_ID=t1\x00FETCH_TASK_IDX=no\x00")
	if got := envValue(env, TagEnv); got != "t1" {
		t.Errorf("envValue = %q, want t1", got)
	}
	if got := envValue([]byte("X_FETCH_TASK_ID=t1\x00"), TagEnv); got != "" {
		t.Errorf("envValue matched a longer key: %q", got)
	}
}

func TestMembers(t *testing.T) {
	procs := []proc{
		{pid: 1, ppid: 0, pgid: 1, state: 'S', tag: "t1"},    // init: never
		{pid: 10, ppid: 1, pgid: 10, state: 'S'},             // group leader
		{pid: 11, ppid: 10, pgid: 10, state: 'Z'},            // zombie: gone
		{pid: 12, ppid: 1, pgid: 12, state: 'S', tag: "t1"},  // escaped, tagged
		{pid: 13, ppid: 1, pgid: 13, state: 'S', tag: "t2"},  // another task
		{pid: 14, ppid: 1, pgid: 10, state: 'R'},             // the caller itself
		{pid: 15, ppid: 1, pgid: 15, state: 'S', tag: "t1x"}, // longer tag
		{pid: 16, ppid: 1, pgid: 16, state: 'D', tag: "t1"},  // uninterruptible, still alive
		{pid: 20, ppid: 0, pgid: 20, state: 'S'},             // a docker exec
		{pid: 21, ppid: 20, pgid: 10, state: 'S', tag: "t1"}, // in its tree: never
	}
	got := pidsOf(members(procs, target{pgid: 10, tag: "t1", exclude: []int{14}}))
	if diff := cmp.Diff([]int{10, 12, 16}, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if got := members(procs, target{tag: "none"}); len(got) != 0 {
		t.Errorf("members of an unknown task = %v", got)
	}
}

// TestMembersSparesLiveExecs: strays are init's tree; a live exec's tree is
// touched only when it is the task's runner's, and its descendants are
// selected whatever their group, session or tag.
func TestMembersSparesLiveExecs(t *testing.T) {
	procs := []proc{
		{pid: 1, ppid: 0, pgid: 1, state: 'S'},    // init
		{pid: 30, ppid: 1, pgid: 30, state: 'S'},  // a daemon left by an earlier run
		{pid: 31, ppid: 30, pgid: 31, state: 'S'}, // and its child, in a session of its own
		{pid: 40, ppid: 0, pgid: 40, state: 'S'},  // an exec: a read of git
		{pid: 41, ppid: 40, pgid: 41, state: 'S'}, // its child
		{pid: 50, ppid: 0, pgid: 50, state: 'S'},  // the runner (an exec)
		{pid: 51, ppid: 50, pgid: 51, state: 'S'}, // its child
		{pid: 52, ppid: 50, pgid: 52, state: 'S'}, // double-forked, reparented to the runner
		{pid: 53, ppid: 52, pgid: 53, state: 'Z'}, // gone
		{pid: 60, ppid: 99, pgid: 60, state: 'S'}, // parent vanished meanwhile: unknown yet
	}
	tests := []struct {
		name string
		t    target
		want []int
	}{
		{"strays", target{strays: true, exclude: []int{50}}, []int{30, 31}},
		{"the runner's end", target{runner: 50, descendants: true, strays: true, exclude: []int{50}}, []int{30, 31, 51, 52}},
		{"ephemeral end", target{runner: 50, descendants: true, exclude: []int{50}}, []int{51, 52}},
		{"stop with a forged group", target{pgid: 41, tag: "x"}, nil},
		{"stop of the runner's group", target{pgid: 51, runner: 50}, []int{51}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, pidsOf(members(procs, tt.t))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestScanProcsReadsFakeProc(t *testing.T) {
	root := t.TempDir()
	write := func(pid, name, content string) {
		t.Helper()
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("5", "stat", "5 (sh) S 1 5 5 0")
	write("5", "environ", "A=1\x00FETCH_TASK_ID=job\x00")
	write("6", "stat", "6 (sleep) S 5 5 5 0") // no environ: unreadable
	write("7", "stat", "8 (liar) S 5 5 5 0")  // pid mismatch: skipped
	write("self", "stat", "1 (x) S 0 1 1 0")  // not a pid
	got, err := scanProcs(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []proc{{pid: 5, ppid: 1, pgid: 5, state: 'S', tag: "job"}, {pid: 6, ppid: 5, pgid: 5, state: 'S'}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(proc{})); diff != "" {
		t.Errorf("scanProcs (-want +got):\n%s", diff)
	}
}

func TestFrameReaderWaitsForWholeFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fr := &frameReader{f: r}

	whole := appendFrame(nil, Stdout, []byte("hello\n"))
	whole = appendFrame(whole, Stderr, []byte("oops"))
	half := appendFrame(nil, Stdout, []byte("world"))
	mustWrite(t, w, append(whole, half[:10]...))

	var out, errOut bytes.Buffer
	if err := fr.drain(&out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\n" || errOut.String() != "oops" {
		t.Fatalf("after first drain: stdout %q stderr %q", out.String(), errOut.String())
	}
	mustWrite(t, w, half[10:])
	if err := fr.drain(&out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\nworld" {
		t.Errorf("after second drain: stdout %q", out.String())
	}
}

func TestFrameReaderRejectsCorruptLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	hdr := []byte{9, 0, 0, 0}
	hdr = binary.BigEndian.AppendUint32(hdr, 3)
	if err := os.WriteFile(path, append(hdr, "abc"...), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := (&frameReader{f: f}).drain(io.Discard, io.Discard); err == nil {
		t.Error("drain of a corrupt log: no error")
	}
}

func TestMainUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, ExitUsage},
		{"unknown command", []string{"explode"}, ExitUsage},
		{"bad task id", []string{CmdStop, "--task", "../etc"}, ExitUsage},
		{"run with bad id fails like the shim", []string{CmdRun, "--task", "a b", "--", "true"}, ExitShimFailed},
		{"run without command", []string{CmdRun, "--task", "t", "--state", t.TempDir()}, ExitShimFailed},
		{"stray arguments", []string{CmdPs, "--state", t.TempDir(), "extra"}, ExitUsage},
		{"negative grace", []string{CmdStop, "--task", "t", "--grace", "-1s"}, ExitUsage},
		{"log of unknown task", []string{CmdLog, "--task", "t", "--state", t.TempDir()}, ExitNoLog},
		{"forget of unknown task", []string{CmdForget, "--task", "t", "--state", filepath.Join(t.TempDir(), "none")}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Main(context.Background(), tt.args, io.Discard, io.Discard); got != tt.want {
				t.Errorf("Main(%q) = %d, want %d", tt.args, got, tt.want)
			}
		})
	}
}

func TestArgvBuilders(t *testing.T) {
	got := RunArgv("t1", RunOptions{Ephemeral: true, Grace: DefaultGrace}, []string{"echo", "--", "a b"})
	want := []string{Path, CmdRun, "--task", "t1", "--grace", "2s", "--ephemeral", "--", "echo", "--", "a b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunArgv (-want +got):\n%s", diff)
	}
}

func mustWrite(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
}
