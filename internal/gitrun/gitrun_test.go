package gitrun_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel"
)

// fakeKennel records the spec and answers with lines and an exit code.
type fakeKennel struct {
	spec  kennel.ExecSpec
	lines []string
	code  int
}

func (f *fakeKennel) Exec(_ context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	f.spec = spec
	for _, l := range f.lines {
		fn(kennel.Stdout, []byte(l))
	}
	fn(kennel.Stderr, []byte("ignored"))
	return kennel.Result{ExitCode: f.code, StderrTail: []byte("fatal: no\n")}, nil
}

func TestRunIsHardenedAndBounded(t *testing.T) {
	k := &fakeKennel{lines: []string{"one", "two"}}
	out, err := gitrun.New(k).Run(t.Context(), gitrun.Cmd{Workspace: "/ws", Dir: "/ws/sub", Args: []string{"status"}, Env: []string{"GIT_INDEX_FILE=/ws/.git/x"}})
	if err != nil || out.Stdout != "one\ntwo\n" || out.Truncated || !slices.Equal(out.Lines(), []string{"one", "two"}) {
		t.Fatalf("out %+v, %v", out, err)
	}
	want := append(append([]string{"git"}, gitrun.Hardening...), "status")
	if !slices.Equal(k.spec.Argv, want) || k.spec.Workspace != "/ws" || k.spec.Dir != "/ws/sub" || k.spec.Timeout != gitrun.DefaultTimeout {
		t.Fatalf("spec = %+v", k.spec)
	}
	for _, kv := range []string{"core.hooksPath=/dev/null", "core.fsmonitor=false", "credential.helper=", "protocol.ext.allow=never"} {
		if !slices.Contains(k.spec.Argv, kv) {
			t.Errorf("argv lacks -c %s", kv)
		}
	}
	if !slices.Contains(k.spec.Env, "GIT_CONFIG_GLOBAL=/dev/null") || !slices.Contains(k.spec.Env, "GIT_INDEX_FILE=/ws/.git/x") || len(k.spec.Env) != len(gitrun.Env)+1 {
		t.Fatalf("env = %q", k.spec.Env)
	}

	if _, err := gitrun.New(k).Run(t.Context(), gitrun.Cmd{Workspace: "/ws", Args: []string{"status"}, Env: []string{"LD_PRELOAD=/x.so"}}); err == nil {
		t.Fatal("a variable outside the allowlist was accepted")
	}

	k.lines = []string{strings.Repeat("a", 10), strings.Repeat("b", 10)}
	out, err = gitrun.New(k).Run(t.Context(), gitrun.Cmd{Workspace: "/ws", Args: []string{"diff"}, MaxOutput: 15})
	if err != nil || !out.Truncated || len(out.Stdout) != 15 {
		t.Fatalf("bounded: %q %v %v", out.Stdout, out.Truncated, err)
	}

	k.code = 128
	_, err = gitrun.New(k).Run(t.Context(), gitrun.Cmd{Workspace: "/ws", Args: []string{"clone", "--", "https://user:tok3n@example.com/r.git", "/ws"}})
	var ge *gitrun.GitError
	if !errors.As(err, &ge) || ge.ExitCode != 128 || ge.Stderr != "fatal: no" || strings.Contains(err.Error(), "tok3n") || ge.Args[2] != "https://example.com/r.git" {
		t.Fatalf("err = %#v", err)
	}
}

func TestRunPassesRawStreams(t *testing.T) {
	k := &fakeKennel{}
	in := strings.NewReader("input")
	var out strings.Builder
	got, err := gitrun.New(k).Run(t.Context(), gitrun.Cmd{Workspace: "/ws", Args: []string{"bundle", "create", "-", "main"}, Stdin: in, Stdout: &out})
	if err != nil || got.Stdout != "" {
		t.Fatalf("out %+v, %v", got, err)
	}
	if k.spec.Stdin != in || k.spec.Stdout != &out {
		t.Fatalf("spec streams: stdin %v, stdout %v", k.spec.Stdin, k.spec.Stdout)
	}
	if !slices.Contains(k.spec.Argv, "core.hooksPath=/dev/null") {
		t.Errorf("a raw command lost the hardening: %q", k.spec.Argv)
	}
}
