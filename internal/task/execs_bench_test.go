package task_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// countingDocker counts the execs a Kennel creates on its engine.
type countingDocker struct {
	*client.Client
	execs atomic.Int64
}

func (c *countingDocker) ContainerExecCreate(ctx context.Context, id string, o container.ExecOptions) (container.ExecCreateResponse, error) {
	c.execs.Add(1)
	return c.Client.ContainerExecCreate(ctx, id, o)
}

// BenchmarkTrivialTask measures Fetch's own work around a trivial task
// (worktree, run, record, the branch into Fetch's own repository), on the
// local engine and on a second engine where the workspace is a volume: the
// Docker execs it starts per task and its wall time, against one raw exec
// of the same scripted CLI run. It reports execs/task, the task's
// milliseconds, the raw exec's, their ratio (the task's whole time over
// the raw exec's), and Fetch's own time (the task's less the raw exec's)
// over the raw exec's.
func BenchmarkTrivialTask(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		counter := &countingDocker{Client: testkit.RequireDocker(b)}
		k, err := kennel.New(counter, kennel.Config{Image: testkit.HarnessImage(b), Instance: testInstance, Grace: time.Second}, quiet())
		if err != nil {
			b.Fatal(err)
		}
		runner := &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry(), Credentials: harness.Credentials{"ANTHROPIC_API_KEY": "sk-test"}}
		e := newEngine(b, runner, engineOptions{timeout: time.Minute, repos: k})
		ws := e.workspace(b, k, "trivial")
		benchTrivial(b, e.Engine, k, ws, counter)
	})
	b.Run("remote-tls", func(b *testing.B) {
		engine := testkit.RemoteEngine(b)
		benchRemote(b, engine, engine.Client(b))
	})
	b.Run("remote-ssh", func(b *testing.B) {
		engine := testkit.RemoteEngine(b)
		specs, err := kennel.ParseEngines("remote-ssh=" + engine.SSHURL + "?key=" + engine.SSHKey + "&known_hosts=" + engine.KnownHosts)
		if err != nil {
			b.Fatal(err)
		}
		home, _ := os.UserHomeDir()
		e, err := kennel.Dial(b.Context(), specs[0], kennel.DialConfig{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		benchRemote(b, engine, e.Client)
	})
}

// benchRemote measures trivial tasks on testkit's second engine, reached
// through docker, where the workspace is a volume.
func benchRemote(b *testing.B, engine *testkit.Engine, docker *client.Client) {
	image := testkit.HarnessImage(b)
	engine.LoadImage(b, image)
	counter := &countingDocker{Client: docker}
	k, err := kennel.New(counter, kennel.Config{Image: image, Instance: testInstance, Grace: time.Second, Volumes: true}, quiet())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "fetch.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	reg := workspace.New(filepath.Join(dir, "workspaces"), quiet()).
		Placed(workspace.NewPlacement(db, func(context.Context) (string, error) { return "remote", nil }))
	local, err := kennel.New(testkit.RequireDocker(b), kennel.Config{Image: image, Instance: testInstance}, quiet())
	if err != nil {
		b.Fatal(err)
	}
	pool, err := kennel.NewPool("local", map[string]*kennel.Kennel{"local": local, "remote": k}, reg.EngineOf)
	if err != nil {
		b.Fatal(err)
	}
	reg.InKennel(pool)
	info, err := reg.Create(context.Background(), "trivial", "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pool.Remove(ctx, info.Path)
		pool.RemoveVolume(ctx, info.Path)
	})
	repos, err := mirror.New(mirror.Config{Root: filepath.Join(dir, "repos"), Kennel: pool, Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	e := task.New(task.Config{Store: db, Workspaces: reg, Runner: &task.KennelRunner{Kennel: pool, Harnesses: harness.NewRegistry(), Credentials: harness.Credentials{"ANTHROPIC_API_KEY": "sk-test"}},
		Repos: repos, Timeout: time.Minute, Logger: quiet()})
	if err := e.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(context.Background()) })
	benchTrivial(b, e, k, info.Path, counter)
}

func benchTrivial(b *testing.B, e *task.Engine, k *kennel.Kennel, ws string, counter *countingDocker) {
	ctx := context.Background()
	run := func() {
		t, err := e.Create(ctx, task.Request{Workspace: filepath.Base(ws), Goal: "touch a file [file:x.txt]"})
		if err != nil {
			b.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		got, err := e.Wait(wctx, t.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.State != task.Succeeded {
			b.Fatalf("task %s: %s: %s", got.ID, got.State, got.Error)
		}
	}
	raw := func() time.Duration {
		t0 := time.Now()
		res, err := k.Exec(ctx, kennel.ExecSpec{Workspace: ws, Argv: []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "say hello [scenario:answer]"},
			Env: []string{"ANTHROPIC_API_KEY=sk-test"}, Timeout: time.Minute}, func(kennel.Stream, []byte) {})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("raw exec: %+v %v %s", res, err, res.StderrTail)
		}
		return time.Since(t0)
	}
	run() // warm-up: the container is up
	// The kennel's storage driver sets what a process start costs in it
	// (fuse-overlayfs much more than overlay2, for a user other than root).
	if info, err := counter.Info(ctx); err == nil {
		b.Logf("engine storage driver: %s", info.Driver)
	}
	var raws, tasks []time.Duration
	var execs int64
	b.ResetTimer()
	for b.Loop() {
		raws = append(raws, raw())
		before := counter.execs.Load()
		t0 := time.Now()
		run()
		tasks = append(tasks, time.Since(t0))
		execs += counter.execs.Load() - before
	}
	median := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	b.ReportMetric(float64(execs)/float64(len(tasks)), "execs/task")
	b.ReportMetric(float64(median(tasks).Microseconds())/1000, "task-ms")
	b.ReportMetric(float64(median(raws).Microseconds())/1000, "raw-exec-ms")
	b.ReportMetric(float64(median(tasks))/float64(median(raws)), "×raw")
	b.ReportMetric(float64(median(tasks)-median(raws))/float64(median(raws)), "own×raw")
}
