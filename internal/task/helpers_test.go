package task_test

import (
	"context"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/mirror"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	goleak.VerifyTestMain(m)
}

func quiet() *slog.Logger {
	if os.Getenv("FETCH_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type engineOptions struct {
	maxParallel int
	timeout     time.Duration
	adopt       bool
	outputCap   int
	// taskBudget is Config.TaskBudgetUSD.
	taskBudget float64
	// secrets, when set, are what the engine's secret scan looks for (with
	// the gitleaks rules).
	secrets []string
	// dir holds fetch.db and the workspaces; a new temporary one when empty.
	dir string
	// reconnect is Config.ReconnectMin and ReconnectMax.
	reconnect time.Duration
	// repos runs Fetch's own repositories (Config.Repos, a mirror under
	// dir) over this kennel, as the binary does; when nil, over the
	// runner's kennel if it is a *task.KennelRunner. kennelDiff: none, the
	// work is read in the kennel.
	repos      gitrun.Exec
	kennelDiff bool
}

type testEngine struct {
	*task.Engine
	ws    *workspace.Registry
	db    *store.DB
	dir   string
	obs   *observer
	patch string
}

// newEngine opens an engine over a fresh (or the given) data directory.
// The workspaces belong to the kennel's user, as in production when Fetch
// runs as root.
func newEngine(t testing.TB, runner task.Runner, o engineOptions) *testEngine {
	t.Helper()
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
		for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ws := workspace.New(filepath.Join(dir, "workspaces"), quiet()).RunAs(10001, 10001)
	obs := &observer{changed: make(chan struct{})}
	var finder task.SecretFinder
	if len(o.secrets) > 0 {
		r, err := redact.New(o.secrets...)
		if err != nil {
			t.Fatal(err)
		}
		finder = r
	}
	var repos task.Repos
	if kr, ok := runner.(*task.KennelRunner); ok && o.repos == nil && kr.Kennel != nil {
		o.repos = kr.Kennel
	}
	if o.repos != nil && !o.kennelDiff {
		m, err := mirror.New(mirror.Config{Root: filepath.Join(dir, "repos"), Kennel: o.repos, Secrets: finder, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		repos = m
	}
	e := task.New(task.Config{
		Secrets: finder, Repos: repos,
		Store: db, Workspaces: ws, Runner: runner, MaxParallel: o.maxParallel, Timeout: o.timeout, OutputCap: o.outputCap,
		PatchDir: filepath.Join(dir, "patches"), Observer: obs, Adopt: o.adopt, Logger: quiet(),
		TaskBudgetUSD: o.taskBudget, TaskBudgetSetting: "FETCH_TASK_BUDGET_USD",
		ReconnectMin: o.reconnect, ReconnectMax: o.reconnect,
	})
	if err := e.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return &testEngine{Engine: e, ws: ws, db: db, dir: dir, obs: obs, patch: filepath.Join(dir, "patches")}
}

// repoGit runs git in Fetch's own repository of workspace ws.
func (e *testEngine) repoGit(t testing.TB, ws string, args ...string) string {
	t.Helper()
	return gitOut(t, e.dir, append([]string{"--git-dir=" + filepath.Join(e.dir, "repos", ws+".git")}, args...)...)
}

// observer records every update.
type observer struct {
	mu      sync.Mutex
	updates []task.Update
	changed chan struct{}
}

func (o *observer) TaskUpdate(_ context.Context, u task.Update) {
	o.mu.Lock()
	o.updates = append(o.updates, u)
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

func (o *observer) of(id string) []task.Update {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []task.Update
	for _, u := range o.updates {
		if u.Task.ID == id {
			out = append(out, u)
		}
	}
	return out
}

// waitFor waits until an update of task id satisfies ok.
func (o *observer) waitFor(t testing.TB, id string, ok func(task.Update) bool) task.Update {
	t.Helper()
	deadline := time.After(90 * time.Second)
	seen := 0
	for {
		o.mu.Lock()
		ups, changed := o.updates, o.changed
		o.mu.Unlock()
		for ; seen < len(ups); seen++ {
			if ups[seen].Task.ID == id && ok(ups[seen]) {
				return ups[seen]
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("task %s: the awaited update never came (%d updates)", id, len(o.of(id)))
		}
	}
}

// progressWith matches a progress update of the given event kind.
func progressWith(k harness.Kind) func(task.Update) bool {
	return func(u task.Update) bool { return u.Kind == task.Progress && u.Event != nil && u.Event.Kind == k }
}
