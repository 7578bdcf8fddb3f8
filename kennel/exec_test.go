package kennel_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/kennel"
)

func TestExecPassesArgvVerbatim(t *testing.T) {
	e := newEnv(t)
	pwned := filepath.Join(e.ws, "pwned")
	goal := "fix the bug'; touch " + pwned + "1; echo \"$(touch " + pwned + "2)\" `touch " + pwned + "3` " +
		"&& rm -rf ~ || reboot | cat > " + pwned + "4 < /etc/passwd & $HOME ${PATH} $((1+1)) * ? [a-z] {a,b} ~root " +
		"\\ \\\\ \" '' # comment\nsecond line\ttab\r\x01\x7f ünïcödé 🐕 %s %n %d"
	argv := []string{helperPath, "argv", "--help", goal, "", " ", "-c", "$0"}
	res, l := e.mustExec(argv...)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.ExitCode, res.StderrTail)
	}
	want := []string{fmt.Sprintf("argc=%d", len(argv)-2)}
	for _, a := range argv[2:] {
		want = append(want, hex.EncodeToString([]byte(a)))
	}
	if diff := cmp.Diff(want, l.out()); diff != "" {
		t.Errorf("arguments as the program saw them (-want +got):\n%s", diff)
	}
	for i := 1; i <= 4; i++ {
		if _, err := os.Stat(fmt.Sprintf("%s%d", pwned, i)); err == nil {
			t.Errorf("%s%d exists: part of the goal was run by a shell", pwned, i)
		}
	}
}

func TestExecResult(t *testing.T) {
	e := newEnv(t)
	sh := e.script("result.sh", `echo out1; echo err1 >&2; echo out2; printf 'no newline' >&2; exit 42`)
	res, l := e.mustExec(sh)
	if res.ExitCode != 42 {
		t.Errorf("exit code %d, want 42", res.ExitCode)
	}
	if diff := cmp.Diff([]string{"out1", "out2"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"err1", "no newline"}, l.err()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if got := string(res.StderrTail); got != "err1\nno newline" {
		t.Errorf("stderr tail %q", got)
	}
	if res.Stopped || res.TimedOut {
		t.Errorf("result %+v: not stopped", res)
	}
}

func TestExecProgramNotFound(t *testing.T) {
	e := newEnv(t)
	res, _, err := e.exec(context.Background(), kennel.ExecSpec{Argv: []string{"no-such-cli"}, TaskID: newTaskID()})
	if err != nil {
		t.Fatalf("a program that cannot start is a result, not an error: %v", err)
	}
	if res.ExitCode != 127 || !strings.Contains(string(res.StderrTail), "no-such-cli") {
		t.Errorf("result %+v (stderr %q), want exit 127 naming the program", res, res.StderrTail)
	}
}

func TestExecStdinIsClosed(t *testing.T) {
	e := newEnv(t)
	// cat would wait forever on an open stdin.
	res, l := e.mustExec("sh", "-c", "cat; echo eof")
	if res.ExitCode != 0 || !slices.Equal(l.out(), []string{"eof"}) {
		t.Errorf("result %+v, stdout %q", res, l.out())
	}
}

func TestExecWorkspaceAtItsOwnPath(t *testing.T) {
	e := newEnv(t)
	sub := filepath.Join(e.ws, "sub dir")
	if err := os.Mkdir(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sub, 0o777); err != nil { // past the umask: the kennel user writes here
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "from-host"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{
		Dir:  sub,
		Argv: []string{"sh", "-c", "pwd; cat from-host; echo; echo made > from-kennel"},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v (stderr %q)", res, err, res.StderrTail)
	}
	if diff := cmp.Diff([]string{sub, "hello"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(sub, "from-kennel")); err != nil || string(b) != "made\n" {
		t.Errorf("file written in the kennel, seen on the host: %q, %v", b, err)
	}
}

func TestExecEnvironmentHoldsOnlyWhatTheRunGets(t *testing.T) {
	// Fetch's own secrets and other CLIs' keys in Fetch's environment must
	// not reach the kennel.
	secrets := []string{"FETCH_DISCORD_TOKEN", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN"}
	for _, s := range secrets {
		t.Setenv(s, "secret-"+s)
	}
	e := newEnv(t)
	task := newTaskID()
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{
		Argv:   []string{"env"},
		Env:    []string{"CODEX_API_KEY=only-this", "NO_COLOR=1"},
		TaskID: task,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec env: %+v, %v", res, err)
	}
	var names []string
	for _, kv := range l.out() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
		if strings.Contains(kv, "secret-") {
			t.Errorf("secret in the run's environment: %s", name)
		}
	}
	slices.Sort(names)
	want := []string{"CODEX_API_KEY", "FETCH_TASK_ID", "HOME", "HOSTNAME", "NO_COLOR", "PATH"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("environment variables of the run (-want +got):\n%s", diff)
	}
	if !slices.Contains(l.out(), "FETCH_TASK_ID="+task) || !slices.Contains(l.out(), "HOME="+kennel.Home) {
		t.Errorf("environment %q lacks the task tag or HOME", l.out())
	}

	// The container itself carries no environment beyond the image's.
	info, err := e.docker.ContainerInspect(context.Background(), e.containerID())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range info.Config.Env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PATH" && name != "HOME" {
			t.Errorf("container environment holds %s", name)
		}
	}
}

func TestExecRejectsInvalidSpecs(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		spec kennel.ExecSpec
	}{
		{"relative workspace", kennel.ExecSpec{Workspace: "ws", Argv: []string{"true"}}},
		{"unclean workspace", kennel.ExecSpec{Workspace: e.ws + "/../x", Argv: []string{"true"}}},
		{"root workspace", kennel.ExecSpec{Workspace: "/", Argv: []string{"true"}}},
		{"system workspace", kennel.ExecSpec{Workspace: "/usr/lib", Argv: []string{"true"}}},
		{"home workspace", kennel.ExecSpec{Workspace: kennel.Home, Argv: []string{"true"}}},
		{"empty argv", kennel.ExecSpec{Workspace: e.ws}},
		{"NUL in argv", kennel.ExecSpec{Workspace: e.ws, Argv: []string{"echo", "a\x00b"}}},
		{"relative dir", kennel.ExecSpec{Workspace: e.ws, Dir: "sub", Argv: []string{"true"}}},
		{"bad task id", kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, TaskID: "../x"}},
		{"Fetch's own variable", kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, Env: []string{"FETCH_DISCORD_TOKEN=x"}}},
		{"env without value", kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, Env: []string{"JUSTNAME"}}},
		{"negative timeout", kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}, Timeout: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.k.Exec(context.Background(), tt.spec, nil)
			if !errors.Is(err, kennel.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if n := len(e.containers()); n != 0 {
		t.Errorf("%d containers created for invalid specs", n)
	}
}

func TestExecStreamsLargeOutputInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB through Docker")
	}
	e := newEnv(t)
	const total = 50 << 20
	var baseline runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&baseline)
	var bytes, count int
	var peak uint64
	var ms runtime.MemStats
	res, err := e.k.Exec(context.Background(), kennel.ExecSpec{
		Workspace: e.ws,
		Argv:      []string{helperPath, "flood", fmt.Sprint(total)},
		TaskID:    newTaskID(),
	}, func(s kennel.Stream, line []byte) {
		bytes += len(line) + 1
		count++
		if count%20000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v (stderr %q)", res, err, res.StderrTail)
	}
	if bytes != total || count != (total+99)/100 {
		t.Errorf("received %d bytes in %d lines, want %d in %d", bytes, count, total, (total+99)/100)
	}
	// Buffering the output would take 50 MB; streaming takes a few buffers.
	if grew := int64(peak) - int64(baseline.HeapInuse); grew > 16<<20 {
		t.Errorf("heap in use grew by %d MiB while streaming", grew>>20)
	}
	t.Logf("heap in use: baseline %d KiB, peak %d KiB", baseline.HeapInuse>>10, peak>>10)
}

func TestExecSplitsOverlongLines(t *testing.T) {
	e := newEnv(t, func(c *kennel.Config) { c.MaxLine = 1000 })
	sh := e.script("long.sh", `head -c 3005 /dev/zero | tr '\0' x; echo; echo short`)
	res, l := e.mustExec(sh)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	var lens []int
	for _, s := range l.out() {
		lens = append(lens, len(s))
	}
	if diff := cmp.Diff([]int{1000, 1000, 1000, 5, 5}, lens); diff != "" {
		t.Errorf("line lengths (-want +got):\n%s", diff)
	}
}
