package checks_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/checks"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// fakeKennel plays a kennel: each argv's first word decides how the run
// ends. The journeys run the checks in a real one.
type fakeKennel struct {
	mu    sync.Mutex
	files string // what detection's script prints
	ran   [][]string
}

func (k *fakeKennel) Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	k.mu.Lock()
	k.ran = append(k.ran, spec.Argv)
	k.mu.Unlock()
	if spec.Dir != "/ws/.fetch/worktrees/t1" || spec.Workspace != "/ws" {
		return kennel.Result{}, context.Canceled
	}
	switch spec.Argv[0] {
	case "sh":
		if spec.Argv[1] == "-c" && spec.Stdout != nil {
			spec.Stdout.Write([]byte(k.files))
			return kennel.Result{}, nil
		}
		return kennel.Result{ExitCode: 0}, nil
	case "fail":
		fn(kennel.Stdout, []byte("--- FAIL: TestHealth"))
		fn(kennel.Stderr, []byte("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 \x1b[31mred\x1b[0m"))
		return kennel.Result{ExitCode: 2}, nil
	case "hang":
		select {
		case <-time.After(spec.Timeout):
		case <-ctx.Done():
		}
		return kennel.Result{Stopped: true, TimedOut: true, ExitCode: 137}, kennel.ErrTimeout
	case "go":
		return kennel.Result{ExitCode: 127}, nil
	}
	return kennel.Result{}, nil
}

func open(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"), store.WithScrub(func(s string) string {
		return strings.ReplaceAll(s, "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]")
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func apply(t *testing.T, db *store.DB, r *checks.Runner, action, arg string) string {
	t.Helper()
	var reply string
	if err := db.Tx(t.Context(), func(tx *sql.Tx) error {
		var err error
		reply, _, err = r.ApplyTx(t.Context(), tx, "c", "100", instincts.Response{Effect: instincts.Checks, Workspace: "app", ChecksAction: action, ChecksArg: arg})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return reply
}

var target = checks.Target{Workspace: "app", Path: "/ws", Dir: "/ws/.fetch/worktrees/t1"}

func TestRunnerRunsWhatTheOwnerSet(t *testing.T) {
	db := open(t)
	k := &fakeKennel{}
	r := checks.New(checks.Config{Store: db, Kennel: k, Limit: 200 * time.Millisecond})
	for _, tc := range []struct{ action, arg, want string }{
		{"", "", "detected from the task's files"},
		{"set", "ok one", "- ok one"},
		{"add", "fail 'the test'", "- ok one\n- fail 'the test'"},
		{"add", "go test | tee x", "Not changed: \"go test | tee x\" is more than one plain command; write sh -c"},
		{"add", "hang", "- hang"},
		{"add", "go test ./...", "- go test ./..."},
		{"failing", "never", `"never" is not what a failing check does`},
		{"failing", "hold", "no pull request is opened"},
	} {
		if got := apply(t, db, r, tc.action, tc.arg); !strings.Contains(got, tc.want) {
			t.Errorf("/checks %s %s: %q, want %q", tc.action, tc.arg, got, tc.want)
		}
	}
	rep, err := r.Run(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Results {
		got = append(got, c.Command+": "+string(c.Outcome))
	}
	// The owner's go test must run: 127 is a failure, not "not run". The
	// hang spent the time limit.
	want := []string{"ok one: passed", "fail 'the test': failed", "hang: timed out", "go test ./...: skipped"}
	if !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
	if !rep.Failed() || rep.Passed() || rep.OnFail != checks.Hold {
		t.Errorf("report failed %v, passed %v, on fail %q", rep.Failed(), rep.Passed(), rep.OnFail)
	}
	if k.ran[1][0] != "fail" || k.ran[1][1] != "the test" {
		t.Errorf("the quoted argument reached the kennel as %q", k.ran[1])
	}
	tail := rep.Results[1].Tail
	if !strings.Contains(tail, "--- FAIL: TestHealth") || strings.Contains(tail, "ghp_") || strings.Contains(tail, "\x1b") {
		t.Errorf("the failure's tail is %q: want the output, masked, without control characters", tail)
	}
	md := rep.Markdown()
	for _, s := range []string{"- `fail 'the test'` (owner): failed (exit 2)", "- `hang` (owner): timed out: cut at the time limit of 200ms", "--- FAIL: TestHealth", "skipped"} {
		if !strings.Contains(md, s) && !strings.Contains(md, "not run: the time limit was spent") {
			t.Errorf("the pull request's section lacks %q:\n%s", s, md)
		}
	}
	if sum := rep.Summary(); !strings.Contains(sum, "❌ `fail 'the test'`: failed (exit 2)") || !strings.Contains(sum, "--- FAIL: TestHealth") {
		t.Errorf("summary %q", sum)
	}
}

func TestRunnerDetects(t *testing.T) {
	db := open(t)
	k := &fakeKennel{files: "\x00FILE go.mod\nmodule x\n\x00FILE Makefile\ntest:\n\tsh t.sh\n"}
	r := checks.New(checks.Config{Store: db, Kennel: k})
	rep, err := r.Run(t.Context(), target)
	if err != nil {
		t.Fatal(err)
	}
	// go is not in this kennel: not run, which fails nothing.
	if len(rep.Results) != 2 || rep.Results[0].Outcome != checks.Missing || rep.Results[1].Command != "make test" || rep.Results[1].Outcome != checks.Passed {
		t.Fatalf("results %+v", rep.Results)
	}
	if rep.Failed() || !rep.Passed() {
		t.Errorf("failed %v, passed %v", rep.Failed(), rep.Passed())
	}
	apply(t, db, r, "off", "")
	if rep, err := r.Run(t.Context(), target); err != nil || len(rep.Results) != 0 || rep.Source != checks.Off {
		t.Errorf("off: %+v, %v", rep, err)
	}
}
