package task_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// The helper process is this test binary re-run as a Fetch process that
// starts a task and then waits to be killed.
const (
	helperEnv      = "FETCH_TASK_HELPER_DIR"
	helperImageEnv = "FETCH_TASK_HELPER_IMAGE"
	helperGoalEnv  = "FETCH_TASK_HELPER_GOAL"
)

// helperMain opens the store and the engine over the data directory in
// helperEnv, starts a task on workspace "app", prints "TASK id", and
// prints "WORKING" once the CLI reported its first text. It never returns
// by itself.
func helperMain() int {
	dir := os.Getenv(helperEnv)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "fetch.db"))
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	docker, err := kennel.NewDockerClient("")
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	k, err := kennel.New(docker, kennel.Config{Image: os.Getenv(helperImageEnv), Instance: testInstance, Grace: time.Second}, quiet())
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	working := make(chan struct{}, 1)
	e := task.New(task.Config{
		Store: db, Workspaces: workspace.New(filepath.Join(dir, "workspaces"), quiet()).RunAs(10001, 10001),
		Runner: &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry()}, Logger: quiet(),
		Observer: observerFunc(func(u task.Update) {
			if u.Kind == task.Progress && u.Event.Kind == harness.KindText {
				select {
				case working <- struct{}{}:
				default:
				}
			}
		}),
	})
	if err := e.Open(ctx); err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	t, err := e.Create(ctx, task.Request{ConversationID: "c1", Workspace: "app", Goal: os.Getenv(helperGoalEnv)})
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	fmt.Println("TASK", t.ID)
	<-working
	fmt.Println("WORKING")
	select {} // until killed
}

type observerFunc func(task.Update)

func (f observerFunc) TaskUpdate(_ context.Context, u task.Update) { f(u) }

// startAndKill runs the helper on dir with goal, waits until its task's
// CLI works, kills the helper with SIGKILL and returns the task id.
func startAndKill(t *testing.T, dir, goal string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir, helperImageEnv+"="+os.Getenv(helperImageEnv), helperGoalEnv+"="+goal)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	var id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "TASK "):
			id = strings.TrimPrefix(line, "TASK ")
		case line == "WORKING":
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			return id
		case strings.HasPrefix(line, "ERROR"):
			t.Fatalf("helper: %s", line)
		}
	}
	t.Fatalf("helper ended without working: %v", sc.Err())
	return ""
}

// TestKillNineThenRestart kills a Fetch process with SIGKILL while its task
// runs, then opens the engine again on the same data directory: a run
// still going is followed to its end; a run gone from the kennel fails
// "interrupted by restart". Either way nothing stays running.
func TestKillNineThenRestart(t *testing.T) {
	k, runner := newKennel(t)
	os.Setenv(helperImageEnv, k.Config().Image)
	for _, tc := range []struct {
		name    string
		goal    string
		between func(t *testing.T, wsPath string)
		want    task.State
		error   string
	}{
		{"still running", "take a while [scenario:slow:4]", nil, task.Succeeded, ""},
		{"gone", "take a while [scenario:slow:30]", func(t *testing.T, wsPath string) {
			// The container goes away with the process, as after a
			// reboot of the host.
			if err := k.Remove(t.Context(), wsPath); err != nil {
				t.Fatal(err)
			}
		}, task.Failed, "interrupted by restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			// The workspace is made before the helper, by the test.
			setup := newEngine(t, runner, engineOptions{dir: dir})
			wsPath := setup.workspace(t, k, "app")
			id := startAndKill(t, dir, tc.goal)
			if got, _ := setup.Get(t.Context(), id); got.State != task.Running || got.Owner == "" {
				t.Fatalf("after kill -9 the store says %+v", got)
			}
			if tc.between != nil {
				tc.between(t, wsPath)
			}

			restarted := newEngine(t, runner, engineOptions{dir: dir, adopt: true})
			got := wait(t, restarted, id)
			if got.State != tc.want || !strings.Contains(got.Error, tc.error) {
				t.Fatalf("after restart: %+v", got)
			}
			restarted.obs.waitFor(t, id, func(u task.Update) bool { return u.Kind == task.Ended })
			ups := restarted.obs.of(id)
			told := 0
			for _, u := range ups {
				if u.Kind == task.Reattached || u.Kind == task.Ended {
					told++
				}
			}
			if tc.want == task.Succeeded && (ups[0].Kind != task.Reattached || !strings.Contains(got.Summary, "Appended")) {
				t.Fatalf("updates after restart start with %s; summary %q", ups[0].Kind, got.Summary)
			}
			if tc.want == task.Failed && told != 1 {
				t.Fatalf("the owner was told %d times; want once", told)
			}
			running, err := restarted.List(t.Context(), task.Filter{States: []task.State{task.Running}})
			if err != nil || len(running) != 0 {
				t.Fatalf("still running: %+v, %v", running, err)
			}
			assertGone(t, k, wsPath, got.RunID)
		})
	}
}
