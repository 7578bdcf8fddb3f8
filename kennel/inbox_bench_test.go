package kennel_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// BenchmarkSendLatency measures a message's way into a running program with
// an inbox on the local engine: from the Send call to the program's echo of
// it (cat) reaching the run's line handler. One exec per Send (the shim's
// send), plus the echo's way back on the run's stream. Reported: p50-ms and
// p99-ms of that, and send-p50-ms (the Send call alone). The target of the
// chat steering is p99 ≤ 200 ms from click to CLI stdin.
//
//	go test ./kennel -run '^$' -bench SendLatency -benchtime 200x
func BenchmarkSendLatency(b *testing.B) {
	e := newEnv(b)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{
		Argv: []string{"sh", "-c", "echo ready; exec cat"}, TaskID: task, Inbox: true,
	}, "ready")
	ctx := context.Background()
	echo := make([]time.Duration, 0, b.N)
	send := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		msg := fmt.Sprintf("m%d", i)
		seen := run.lines.await(msg)
		start := time.Now()
		if err := e.k.Send(ctx, e.ws, task, []byte(msg+"\n")); err != nil {
			b.Fatalf("send: %v", err)
		}
		send = append(send, time.Since(start))
		select {
		case <-seen:
		case <-time.After(30 * time.Second):
			b.Fatalf("%s never came back", msg)
		}
		echo = append(echo, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(percentile(echo, 0.50), "p50-ms")
	b.ReportMetric(percentile(echo, 0.99), "p99-ms")
	b.ReportMetric(percentile(send, 0.50), "send-p50-ms")
	if err := e.k.CloseInput(ctx, e.ws, task); err != nil {
		b.Fatal(err)
	}
	if _, err := run.wait(b, stopLimit); err != nil {
		b.Fatal(err)
	}
}

// percentile is the p-th percentile of ds in milliseconds (ds is sorted).
func percentile(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
}
