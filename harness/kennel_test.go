package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/google/go-cmp/cmp"
)

// These tests run every adapter against the fake CLI in a real kennel
// container (testkit.HarnessImage): non-root, workspace mounted at the same
// path, runs under fetch-shim. They need Docker; see testkit.RequireDocker.

// testGrace is the kennel's SIGINT→SIGKILL grace in these tests.
const testGrace = 2 * time.Second

func newTestKennel(t *testing.T) *kennel.Kennel {
	t.Helper()
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{
		Image:    testkit.HarnessImage(t),
		Instance: "harness-test-" + strconv.Itoa(os.Getpid()),
		Grace:    testGrace,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// kennelRepo makes a workspace repository (like newRepo's) that the kennel
// user owns, and removes its container when the test ends.
func kennelRepo(t *testing.T, k *kennel.Kennel) string {
	t.Helper()
	ws := testkit.KennelWorkspace(t)
	fillRepo(t, ws)
	uid, gid := kennelUser(t, k)
	err := filepath.Walk(ws, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if os.Geteuid() == 0 {
			return os.Lchown(path, uid, gid)
		}
		return os.Chmod(path, 0o777) // not root: make it writable for everyone instead
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := k.Remove(ctx, ws); err != nil {
			t.Errorf("remove kennel: %v", err)
		}
	})
	return ws
}

func kennelUser(t *testing.T, k *kennel.Kennel) (int, int) {
	t.Helper()
	u, g, _ := strings.Cut(k.Config().User, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil {
		t.Fatalf("kennel user %q", k.Config().User)
	}
	return uid, gid
}

// recorded returns the value of "fakecli: <key> …" on the fake's stderr.
func recorded(t *testing.T, stderr, key string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "fakecli: "+key+" "); ok {
			return rest
		}
	}
	t.Fatalf("no %s recorded in stderr:\n%s", key, stderr)
	return ""
}

// containerExec runs argv in the workspace's kennel and returns stdout lines
// and the exit code.
func containerExec(t *testing.T, k *kennel.Kennel, ws string, argv ...string) ([]string, int) {
	t.Helper()
	var out []string
	res, err := k.Exec(t.Context(), kennel.ExecSpec{Workspace: ws, Argv: argv}, func(s kennel.Stream, line []byte) {
		if s == kennel.Stdout {
			out = append(out, string(line))
		}
	})
	if err != nil {
		t.Fatalf("exec %v: %v", argv, err)
	}
	return out, res.ExitCode
}

// leftovers lists the fake CLI processes still alive in the kennel.
func leftovers(t *testing.T, k *kennel.Kennel, ws string) []string {
	t.Helper()
	lines, _ := containerExec(t, k, ws, "ps", "-eo", "args=")
	var left []string
	for _, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		if slices.Contains(testkit.FakeCLINames(), name) || name == "fakecli-child" {
			left = append(left, l)
		}
	}
	return left
}

// credentials holds a key for every adapter plus Fetch's own secrets.
var credentials = harness.Credentials{
	"FETCH_DISCORD_TOKEN": "discord-secret", "OPENROUTER_API_KEY": "openrouter-secret", "GITHUB_TOKEN": "pr-secret",
	"ANTHROPIC_API_KEY": "sk-ant-test", "CLAUDE_CODE_OAUTH_TOKEN": "oauth-test",
	"OPENAI_API_KEY": "sk-openai-test", "CODEX_API_KEY": "codex-test",
	"GEMINI_API_KEY": "gemini-test", "GOOGLE_API_KEY": "google-test",
	"COPILOT_GITHUB_TOKEN": "copilot-test", "GH_TOKEN": "gh-test",
	"CURSOR_API_KEY": "cursor-test", "DASHSCOPE_API_KEY": "dashscope-test",
}

// TestKennel runs each adapter in its own kennel through the scenarios the
// issue asks for: the happy path, a goal full of metacharacters, a failure
// with an exit code, and a question answered by resuming.
func TestKennel(t *testing.T) {
	k := newTestKennel(t)
	reg := harness.NewRegistry()
	for _, name := range reg.Names() {
		t.Run(string(name), func(t *testing.T) {
			// Side by side: each adapter has its own workspace, so its
			// own container.
			t.Parallel()
			a, _ := reg.Get(name)
			ws := kennelRepo(t, k)
			uid, _ := kennelUser(t, k)

			t.Run("happy path", func(t *testing.T) {
				task := harness.Task{ID: "happy", Goal: "Write it down [file:notes/done.md]", Workspace: ws}
				var c collector
				o, err := harness.Run(t.Context(), k, a, task, credentials, c.add)
				if err != nil {
					t.Fatal(err)
				}
				if !o.Success || o.ExitCode != 0 || o.Summary == "" || o.SessionID == "" {
					t.Fatalf("outcome %+v", o)
				}
				want := []harness.FileChange{{Path: "notes/done.md", Change: harness.ChangeAdded, Added: 1}}
				if diff := cmp.Diff(want, o.Files); diff != "" {
					t.Errorf("files (-want +got):\n%s", diff)
				}
				if ev := c.kinds(harness.KindFileChanged); len(ev) == 0 || !ev[len(ev)-1].Git || ev[len(ev)-1].Path != "notes/done.md" {
					t.Errorf("file_changed events %+v", ev)
				}
				if name != harness.Cursor && len(c.kinds(harness.KindUsage)) == 0 { // Cursor reports no usage
					t.Error("no usage event")
				}
				if res := c.kinds(harness.KindResult); len(res) != 1 || !res[0].Success || res[0].Text != o.Summary {
					t.Errorf("result events %+v", res)
				}
				if got := recorded(t, o.StderrTail, "uid"); got != strconv.Itoa(uid) {
					t.Errorf("ran as uid %s, want the kennel user %d", got, uid)
				}
				info, err := os.Stat(filepath.Join(ws, "notes", "done.md"))
				if err != nil {
					t.Fatal(err)
				}
				if owner := info.Sys().(*syscall.Stat_t).Uid; owner == 0 {
					t.Error("the edited file belongs to root")
				}
				checkEnv(t, a, task, recorded(t, o.StderrTail, "env"))
			})

			t.Run("metacharacters", func(t *testing.T) {
				goal := "--model=evil -- '; touch pwned #\" $(touch /tmp/pwned2) `touch pwned3` && echo $HOME | tee x > y < z; \\n\n{a,b} ~ * ? ! é 😀 [file:meta.md]"
				task := harness.Task{ID: "meta", Goal: goal, Workspace: ws}
				inv, err := a.Invocation(task, credentials)
				if err != nil {
					t.Fatal(err)
				}
				o, err := harness.Run(t.Context(), k, a, task, credentials, nil)
				if err != nil || !o.Success {
					t.Fatalf("outcome %+v, err %v", o, err)
				}
				if diff := cmp.Diff(inv.Argv, recordedArgv(t, o.StderrTail)); diff != "" {
					t.Fatalf("argv the CLI received (-built +received):\n%s", diff)
				}
				if len(o.Files) != 1 || o.Files[0].Path != "meta.md" {
					t.Fatalf("something else ran: files %+v", o.Files)
				}
				if _, code := containerExec(t, k, ws, "test", "-e", "/tmp/pwned2"); code == 0 {
					t.Fatal("a command substitution in the goal ran")
				}
			})

			t.Run("failure", func(t *testing.T) {
				task := harness.Task{ID: "fail", Goal: "Break [scenario:fail:3]", Workspace: ws}
				o, err := harness.Run(t.Context(), k, a, task, credentials, nil)
				if err != nil {
					t.Fatal(err)
				}
				if o.Success || o.ExitCode != 3 || o.Error == "" || o.TimedOut || len(o.Files) != 0 {
					t.Fatalf("outcome %+v", o)
				}
			})

			t.Run("question and resume", func(t *testing.T) {
				task := harness.Task{ID: "ask", Goal: "Decide [scenario:question] [file:answer.md]", Workspace: ws}
				o, err := harness.Run(t.Context(), k, a, task, credentials, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !o.Success || !strings.Contains(o.Question, "Should I append") || o.SessionID == "" {
					t.Fatalf("outcome %+v", o)
				}
				task.ID, task.ResumeID, task.Answer = "ask-2", o.SessionID, "Append, please."
				o2, err := harness.Run(t.Context(), k, a, task, credentials, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !o2.Success || o2.Question != "" || len(o2.Files) != 1 || o2.Files[0].Path != "answer.md" {
					t.Fatalf("resumed outcome %+v", o2)
				}
				b, _ := os.ReadFile(filepath.Join(ws, "answer.md"))
				if string(b) != "answer: Append, please.\n" {
					t.Fatalf("answer.md = %q", b)
				}
			})
		})
	}
}

// checkEnv checks the environment the CLI saw: its own credentials, and
// none of Fetch's secrets or other CLIs' keys.
func checkEnv(t *testing.T, a harness.Adapter, task harness.Task, recordedNames string) {
	t.Helper()
	inv, err := a.Invocation(task, credentials)
	if err != nil {
		t.Fatal(err)
	}
	own := make(map[string]bool)
	for _, kv := range inv.Env {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	for name := range credentials {
		has := strings.Contains(recordedNames, `"`+name+`"`)
		switch {
		case has && !own[name]:
			t.Errorf("%s reached the kennel", name)
		case !has && own[name]:
			t.Errorf("own credential %s did not reach the CLI", name)
		}
	}
}

// TestKennelTimeout: a run that hangs, with a child in a session of its own,
// is stopped when its timeout expires, like a stop, and reported as a
// timeout; nothing of it is left in the container.
func TestKennelTimeout(t *testing.T) {
	k := newTestKennel(t)
	reg := harness.NewRegistry()
	for _, tt := range []struct {
		name     harness.Name
		scenario string
	}{
		{harness.Claude, "hang"},
		{harness.OpenCode, "ignore-int"},
	} {
		t.Run(string(tt.name)+"/"+tt.scenario, func(t *testing.T) {
			a, _ := reg.Get(tt.name)
			ws := kennelRepo(t, k)
			task := harness.Task{ID: "slow", Goal: "[scenario:" + tt.scenario + "]", Workspace: ws, Timeout: 2 * time.Second}
			start := time.Now()
			o, err := harness.Run(t.Context(), k, a, task, credentials, nil)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if !o.TimedOut || !o.Stopped || o.Success || o.Error != "timed out after 2s" {
				t.Fatalf("outcome %+v", o)
			}
			if took > task.Timeout+testGrace+20*time.Second {
				t.Errorf("took %v to stop", took)
			}
			if left := leftovers(t, k, ws); len(left) > 0 {
				t.Fatalf("left running after the timeout: %q", left)
			}
		})
	}
}

// TestKennelStop stops a hanging run with kennel.Stop, as /stop does.
func TestKennelStop(t *testing.T) {
	k := newTestKennel(t)
	a, _ := harness.NewRegistry().Get(harness.Codex)
	ws := kennelRepo(t, k)
	task := harness.Task{ID: "stopme", Goal: "[scenario:hang]", Workspace: ws}
	var (
		once sync.Once
		wg   sync.WaitGroup
		stop error
	)
	defer wg.Wait()
	onEvent := func(ev harness.Event) {
		if ev.Kind != harness.KindCommand {
			return
		}
		once.Do(func() {
			wg.Add(1)
			go func() { // Stop waits for the run to end; the event callback must not
				defer wg.Done()
				stop = k.Stop(context.WithoutCancel(t.Context()), ws, task.ID)
			}()
		})
	}
	o, err := harness.Run(t.Context(), k, a, task, credentials, onEvent)
	wg.Wait()
	if err != nil || stop != nil {
		t.Fatalf("run err %v, stop err %v", err, stop)
	}
	if !o.Stopped || o.TimedOut || o.Success || o.Error != "stopped" {
		t.Fatalf("outcome %+v", o)
	}
	if left := leftovers(t, k, ws); len(left) > 0 {
		t.Fatalf("left running after stop: %q", left)
	}
}

// TestKennelHugeOutput streams many MB of events through the kennel.
func TestKennelHugeOutput(t *testing.T) {
	k := newTestKennel(t)
	a, _ := harness.NewRegistry().Get(harness.Claude)
	ws := kennelRepo(t, k)
	var n, size int
	o, err := harness.Run(t.Context(), k, a, harness.Task{ID: "huge", Goal: "[scenario:huge:16]", Workspace: ws}, credentials,
		func(ev harness.Event) { n++; size += len(ev.Text) })
	if err != nil || !o.Success {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
	if size < 16<<20 {
		t.Fatalf("%d events with %d bytes of text", n, size)
	}
}

// TestKennelCLIMissing: a CLI that is not in the kennel image fails the
// run with a message naming it and the command that builds the image with
// it, not Go's "executable file not found".
func TestKennelCLIMissing(t *testing.T) {
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{
		Image:    testkit.KennelImage(t), // no CLIs
		Instance: "harness-nocli-" + strconv.Itoa(os.Getpid()),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := kennelRepo(t, k)
	reg := harness.NewRegistry()
	for _, name := range []harness.Name{"claude", "codex"} {
		a, _ := reg.Get(name)
		o, err := harness.Run(t.Context(), k, a, harness.Task{ID: "nocli-" + string(name), Goal: "anything", Workspace: ws}, credentials, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := string(name) + " is not installed in the kennel image: build the image with it: scripts/build-images.sh --kennel-only --cli " + string(name)
		if o.Success || o.Error != want {
			t.Errorf("%s: outcome error %q; want %q", name, o.Error, want)
		}
	}
}
