package task_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// execCounter counts the execs created through a Docker client (their
// start is a hijacked connection that bypasses the transport; their
// creation is not).
type execCounter struct {
	base  http.RoundTripper
	execs atomic.Int64
}

func (c *execCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/exec") && strings.Contains(r.URL.Path, "/containers/") {
		c.execs.Add(1)
	}
	return c.base.RoundTrip(r)
}

// BenchmarkTrivialTask measures Fetch's own work around a trivial task in
// the local kennel (worktree, run, record): the Docker execs it starts per
// task and its wall time, against one raw exec of the same scripted CLI
// run. It reports execs/task, the task's milliseconds, the raw exec's, and
// their ratio.
func BenchmarkTrivialTask(b *testing.B) {
	docker := testkit.RequireDocker(b)
	counter := &execCounter{base: docker.HTTPClient().Transport}
	counted, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation(), client.WithHTTPClient(&http.Client{Transport: counter}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { counted.Close() })
	k, err := kennel.New(counted, kennel.Config{Image: testkit.HarnessImage(b), Instance: testInstance, Grace: time.Second}, quiet())
	if err != nil {
		b.Fatal(err)
	}
	runner := &task.KennelRunner{Kennel: k, Harnesses: harness.NewRegistry(), Credentials: harness.Credentials{"ANTHROPIC_API_KEY": "sk-test"}}
	e := newEngine(b, runner, engineOptions{timeout: time.Minute})
	ws := e.workspace(b, k, "trivial")
	ctx := context.Background()
	run := func() {
		t, err := e.Create(ctx, task.Request{Workspace: "trivial", Goal: "touch a file [file:x.txt]"})
		if err != nil {
			b.Fatal(err)
		}
		if got := wait(b, e, t.ID); got.State != task.Succeeded {
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
}
