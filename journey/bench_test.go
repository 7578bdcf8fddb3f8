package journey

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// benchWait bounds each wait of the benchmark: on a fetch whose stop
// deadlocks, the benchmark fails after it instead of hanging.
const benchWait = 30 * time.Second

// benchPoll is how often the benchmark reads the kennel's processes: the
// resolution of the "CLI gone" latency.
const benchPoll = 20 * time.Millisecond

// BenchmarkStopLatency measures a stop of a running task in the built
// binary: per iteration the model starts a task whose CLI hangs, the owner
// DMs /stop, and the benchmark records (a) the time from the DM to the
// stop's reply in the fake Discord and (b) the time until no process of
// the CLI is left in the kennel (polled every benchPoll; Docker has no
// event for it). It reports p50 and p99 of both in milliseconds:
//
//	go test -run '^$' -bench StopLatency -benchtime 20x ./journey/
func BenchmarkStopLatency(b *testing.B) {
	w := newWorld(b, "app")
	w.env["FETCH_RATE_LIMIT"] = "0"
	w.start()
	var replies, gone []time.Duration
	for b.Loop() {
		w.llm.Script(taskCreate("bench", "run the long suite [scenario:hang]", "app"), testkit.Say("Started it."))
		m := w.send(ownerID, "run the long test suite in the app workspace")
		status := w.awaitWithin(benchWait, m, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), nil, "the task's status message")
		id := taskID(b, status.Text)
		w.awaitWithin(benchWait, m, regexp.MustCompile(`^Started it\.`), nil, "the agent's answer")
		if ps, ok := w.pollProcesses(benchWait, benchPoll, func(ps []string) bool { return len(ps) > 0 }); !ok {
			b.Fatalf("task %s: no CLI process in the kennel after %s (%q)", id, benchWait, ps)
		}

		m = w.mark(ownerID)
		sent := time.Now()
		w.d.DM(ownerID, "/stop")
		var replied time.Duration
		_, ok := w.pollProcesses(benchWait, benchPoll, func(ps []string) bool {
			if replied == 0 {
				if r, ok := w.find(m, regexp.MustCompile(`Stopping task `+id), nil); ok {
					replied = r.Msg.CreatedAt.Sub(sent)
				}
			}
			return len(ps) == 0
		})
		if !ok {
			b.Fatalf("task %s: CLI processes still in the kennel %s after /stop", id, benchWait)
		}
		gone = append(gone, time.Since(sent))
		if replied == 0 {
			r := w.awaitWithin(benchWait, m, regexp.MustCompile(`Stopping task `+id), nil, "the reply to /stop (a deadlock?)")
			replied = r.Msg.CreatedAt.Sub(sent)
		}
		replies = append(replies, replied)
		// The workspace is free again once the task ended.
		w.awaitWithin(benchWait, m, regexp.MustCompile(`Task `+id+` was cancelled`), nil, "the cancelled task's result")
	}
	b.StopTimer()
	report(b, "stop-reply", replies)
	report(b, "cli-gone", gone)
}

// report adds the p50 and p99 of ds, in milliseconds, to the benchmark's
// result.
func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return float64(s[max(0, min(i, len(s)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}

// steerRequests is how many requests the steering benchmark's task asks
// for at most; the benchmark answers b.N of them and stops it.
const steerRequests = 10000

// BenchmarkSteerLatency measures the two legs of a coding CLI's request
// in the built binary, under supervised autonomy where every command
// asks: (a) from the scripted claude writing a permission request on its
// stdout (in the kennel) to the request's message at the fake Discord,
// and (b) from the owner's click on "Allow once" to the CLI reading the
// reply on its stdin (through fetch-shim's inbox). The CLI stamps both
// moments in a file of its worktree ([times:FILE]); the kennel's clock is
// this machine's. It reports p50 and p99 of both in milliseconds:
//
//	go test -run '^$' -bench SteerLatency -benchtime 50x ./journey/
func BenchmarkSteerLatency(b *testing.B) {
	w := newWorld(b, "app")
	w.env["FETCH_RATE_LIMIT"] = "0"
	w.start()
	w.supervised()
	m, status := w.startApproved("run the checks in app",
		fmt.Sprintf("run the checks [times:.steer-times] [ask-permission-repeat:Bash:npm install left-pad:%d]", steerRequests))
	id := taskID(b, status.Text)
	var shown []time.Time
	var clicks []time.Time
	for b.Loop() {
		req := w.awaitWithin(benchWait, m, requestRe(id, "npm install left-pad"), func(s seen) bool { return s.New }, "the next request")
		m = w.mark(ownerID)
		shown = append(shown, req.Msg.CreatedAt)
		clicks = append(clicks, time.Now())
		w.d.Click(ownerID, req.Msg.ID, w.button(req, "Allow once"))
	}
	b.StopTimer()
	// The last reply must be read before the stamps are.
	wt := filepath.Join(w.workspacePath("app"), ".fetch", "worktrees", id, ".steer-times")
	var reqs, reps []time.Time
	deadline := time.Now().Add(benchWait)
	for {
		reqs, reps = steerStamps(b, wt)
		if len(reps) >= len(clicks) || time.Now().After(deadline) {
			break
		}
		time.Sleep(benchPoll)
	}
	if len(reqs) < len(shown) || len(reps) < len(clicks) {
		b.Fatalf("%s has %d requests and %d replies; want at least %d", wt, len(reqs), len(reps), len(clicks))
	}
	var toChat, toCLI []time.Duration
	for i := range shown {
		toChat = append(toChat, shown[i].Sub(reqs[i]))
		toCLI = append(toCLI, reps[i].Sub(clicks[i]))
	}
	report(b, "request-to-chat", toChat)
	report(b, "click-to-cli", toCLI)
	w.d.DM(ownerID, "/stop")
}

// steerStamps reads the scripted CLI's [times:FILE] stamps.
func steerStamps(b *testing.B, path string) (reqs, reps []time.Time) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		what, ns, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			continue
		}
		switch what {
		case "req":
			reqs = append(reqs, time.Unix(0, n))
		case "rep":
			reps = append(reps, time.Unix(0, n))
		}
	}
	return reqs, reps
}
