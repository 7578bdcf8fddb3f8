package kennel_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// BenchmarkExecLatency measures one trivial exec (`true`: ExecCreate, the
// hijacked attach, the stream to its end, ExecInspect for the exit code) in
// a running container, on the local engine and on testkit's remote engine
// over TLS and over SSH, reporting the median and the 99th percentile. The
// containers are made before the timer starts.
func BenchmarkExecLatency(b *testing.B) {
	remote := testkit.RemoteEngine(b)
	img := testkit.KennelImage(b)
	cfg := localConfig(b)
	local := dialSpec(b, "local", cfg)
	engines := []struct {
		name  string
		entry string
	}{
		{"local", "local"},
		{"tls", tlsEntry(remote)},
		{"ssh", sshEntry(remote)},
	}
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			e := dialSpec(b, eng.entry, cfg)
			if _, err := kennel.EnsureImage(b.Context(), local, e, img); err != nil {
				b.Fatal(err)
			}
			id := sleeper(b, e, img)
			ctx := b.Context()
			durations := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if code := execTrue(b, ctx, e, id); code != 0 {
					b.Fatalf("true: exit %d", code)
				}
				durations = append(durations, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durations)
			pct := func(p float64) float64 {
				i := int(p * float64(len(durations)-1))
				return float64(durations[i].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// sleeper starts a container of img that sleeps, removed when b ends.
func sleeper(b *testing.B, e *kennel.Engine, img string) string {
	b.Helper()
	ctx := b.Context()
	created, err := e.ContainerCreate(ctx,
		&container.Config{Image: img, Entrypoint: []string{"/usr/bin/tini", "--", "sleep", "infinity"}},
		&container.HostConfig{}, nil, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		e.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	})
	if err := e.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		b.Fatal(err)
	}
	return created.ID
}

// execTrue runs `true` in the container and returns its exit code.
func execTrue(b *testing.B, ctx context.Context, e *kennel.Engine, id string) int {
	ex, err := e.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: []string{"true"}, AttachStdout: true, AttachStderr: true})
	if err != nil {
		b.Fatal(err)
	}
	att, err := e.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, att.Reader)
	att.Close()
	if err != nil {
		b.Fatal(err)
	}
	info, err := e.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		b.Fatal(err)
	}
	if info.Running {
		b.Fatal("exec still running after its stream ended")
	}
	return info.ExitCode
}
