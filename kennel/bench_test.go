package kennel_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// BenchmarkDispatch compares an Exec of `true` (through fetch-shim, output
// demultiplexed into lines, exit code awaited) with the bare SDK sequence for
// the same program in the same container: ExecCreate, ExecAttach, read to EOF,
// ExecInspect. The two alternate, so that load from elsewhere hits both alike.
// Reported: kennel-ms and raw-ms per run, and their ratio (target ≤ 1.25).
//
//	go test ./kennel -run '^$' -bench Dispatch -benchtime 100x
func BenchmarkDispatch(b *testing.B) {
	e := newEnv(b)
	e.mustExec("true") // the container exists
	ctr := e.containerID()
	ctx := context.Background()

	viaKennel := func() {
		res, err := e.k.Exec(ctx, kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("kennel exec: %+v, %v", res, err)
		}
	}
	raw := func() {
		resp, err := e.docker.ContainerExecCreate(ctx, ctr, container.ExecOptions{
			User: e.cfg.User, AttachStdout: true, AttachStderr: true, WorkingDir: e.ws, Cmd: []string{"true"},
		})
		if err != nil {
			b.Fatal(err)
		}
		hijack, err := e.docker.ContainerExecAttach(ctx, resp.ID, container.ExecAttachOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stdcopy.StdCopy(io.Discard, io.Discard, hijack.Reader); err != nil {
			b.Fatal(err)
		}
		hijack.Close()
		for {
			info, err := e.docker.ContainerExecInspect(ctx, resp.ID)
			if err != nil {
				b.Fatal(err)
			}
			if !info.Running {
				if info.ExitCode != 0 {
					b.Fatalf("raw exec: exit %d", info.ExitCode)
				}
				break
			}
		}
	}
	viaKennel()
	raw()

	var kennelTime, rawTime time.Duration
	n := 0
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	for b.Loop() {
		if n%2 == 0 {
			kennelTime += timed(viaKennel)
			rawTime += timed(raw)
		} else {
			rawTime += timed(raw)
			kennelTime += timed(viaKennel)
		}
		n++
	}
	b.ReportMetric(float64(kennelTime.Microseconds())/1e3/float64(n), "kennel-ms/op")
	b.ReportMetric(float64(rawTime.Microseconds())/1e3/float64(n), "raw-ms/op")
	b.ReportMetric(float64(kennelTime)/float64(rawTime), "ratio")
}

// BenchmarkStop measures Stop of a running task (a process that ends on
// SIGINT), from the call to its return with every process gone, and reports
// its median and 99th percentile.
//
//	go test ./kennel -run '^$' -bench Stop -benchtime 100x
func BenchmarkStop(b *testing.B) {
	e := newEnv(b)
	e.mustExec("true")
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		task := newTaskID()
		run := e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo ready; exec sleep 600"}, TaskID: task}, "ready")
		b.StartTimer()
		start := time.Now()
		if err := e.k.Stop(ctx, e.ws, task); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		if res, err := run.wait(b, stopLimit); err != nil || !res.Stopped {
			b.Fatalf("stopped run: %+v, %v", res, err)
		}
		b.StartTimer()
	}
	slices.Sort(took)
	pct := func(p float64) float64 {
		i := min(len(took)-1, int(p*float64(len(took))))
		return float64(took[i].Microseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkTrackedRun measures a tracked run (a TaskID: the shim sweeps the
// kennel before the child starts and after it ends) of `echo go` in a running
// container: start-ms is the time from Exec to the child's first line (the
// run's start: exec, shim, sweep, child), total-ms to Exec's return (with the
// end-of-run sweep and the exit record). The run's files are forgotten
// between runs, outside the timing, as the task engine does. Reported as
// medians.
//
// The egress case runs the same behind the kennel's way out (the proxy
// made sure of and its configuration compared before each run, the proxy's
// variables in the run's environment).
//
//	go test ./kennel -run '^$' -bench TrackedRun -benchtime 100x
func BenchmarkTrackedRun(b *testing.B) {
	b.Run("plain", func(b *testing.B) { trackedRuns(b, newEnv(b), nil) })
	b.Run("egress", func(b *testing.B) {
		e, run := egressEnv(b)
		trackedRuns(b, e, &run)
	})
}

func trackedRuns(b *testing.B, e *env, eg *kennel.EgressRun) {
	e.mustExec("true") // the container exists
	ctx := context.Background()
	var starts, totals []time.Duration
	for b.Loop() {
		task := newTaskID()
		var first time.Duration
		spec := kennel.ExecSpec{Workspace: e.ws, Argv: []string{"echo", "go"}, TaskID: task}
		if eg != nil {
			run := *eg
			run.Token = egress.Token(run.Config.Key, "ws", "claude", task)
			spec.Egress = &run
		}
		begin := time.Now()
		res, err := e.k.Exec(ctx, spec, func(s kennel.Stream, line []byte) {
			if first == 0 && s == kennel.Stdout {
				first = time.Since(begin)
			}
		})
		total := time.Since(begin)
		if err != nil || res.ExitCode != 0 || first == 0 {
			b.Fatalf("run: %+v, %v", res, err)
		}
		starts, totals = append(starts, first), append(totals, total)
		b.StopTimer()
		if err := e.k.Forget(ctx, e.ws, task); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1e3
	}
	b.ReportMetric(median(starts), "start-ms")
	b.ReportMetric(median(totals), "total-ms")
}
