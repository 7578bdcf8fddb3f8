package journey

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// defaultModel is FETCH_MODEL's default, the model label of the LLM's
// metrics when the journey sets none.
const defaultModel = "anthropic/claude-sonnet-4.5"

// freePort is a loopback port nobody listens on (taken, then let go).
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// scrape reads fetch's /metrics as Prometheus does (the text format,
// parsed by expfmt).
func scrape(t testing.TB, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s, %v", resp.Status, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return fams
}

// sample is a counter's or gauge's value, or a histogram's count, summed
// over the series of name whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var sum float64
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// J-metrics: with FETCH_METRICS_ADDR set, fetch serve serves Prometheus
// metrics on it. After two commands and a request that became a task,
// the scrape shows what happened: the messages in and out by kind, the
// instincts' reply times, the LLM calls with their tokens (cached ones
// apart) and cost by model, the task ended by harness and state with its
// duration, the kennel's exec starts, the tasks in the database; and no
// label carries a task, user or conversation id.
func TestJourneyMetrics(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	addr := "127.0.0.1:" + freePort(t)
	w.env["FETCH_METRICS_ADDR"] = addr
	w.start()

	before := scrape(t, addr)
	if v := sample(before, "fetch_messages_received_total", nil); v != 0 {
		t.Fatalf("messages counted before any was sent: %v", v)
	}

	w.ask(ownerID, "/status", statusRe)
	w.ask(ownerID, "/help", regexp.MustCompile(`/status`))

	create := taskCreate("call-app", "add a health endpoint [file:health.go]", "app")
	create.CachedTokens, create.Cost = 60, 0.004
	say := testkit.Say("Started it.")
	say.Cost = 0.001
	w.llm.Script(create, say)
	m := w.send(ownerID, "add a health endpoint to the app workspace")
	status := w.await(m, regexp.MustCompile(`Task \S+ on app \(\w+\) — running`), "the task's status message")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")

	fams := scrape(t, addr)
	ge := func(what string, got, want float64) {
		t.Helper()
		if got < want {
			t.Errorf("%s = %v, want at least %v", what, got, want)
		}
	}
	eq := func(what string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// Messages: three sent, two taken by instincts and timed, one by the
	// agent as an action; replies, progress and the result went out.
	ge("messages received", sample(fams, "fetch_messages_received_total", nil), 3)
	ge("messages received as instincts", sample(fams, "fetch_messages_received_total", map[string]string{"kind": "instinct"}), 2)
	ge("messages received as actions", sample(fams, "fetch_messages_received_total", map[string]string{"kind": "action"}), 1)
	ge("instinct replies timed", sample(fams, "fetch_instinct_reply_seconds", nil), 2)
	ge("replies sent", sample(fams, "fetch_messages_sent_total", map[string]string{"kind": "reply"}), 3)
	ge("progress messages sent", sample(fams, "fetch_messages_sent_total", map[string]string{"kind": "progress"}), 1)
	eq("results sent", sample(fams, "fetch_messages_sent_total", map[string]string{"kind": "result"}), 1)
	// The LLM: two calls of the configured model, their tokens and cost.
	byModel := map[string]string{"model": defaultModel}
	eq("LLM calls", sample(fams, "fetch_llm_requests_total", map[string]string{"model": defaultModel, "outcome": "ok"}), 2)
	eq("LLM calls timed", sample(fams, "fetch_llm_request_duration_seconds", byModel), 2)
	eq("uncached prompt tokens", sample(fams, "fetch_llm_tokens_total", map[string]string{"model": defaultModel, "type": "prompt"}), 140)
	eq("cached prompt tokens", sample(fams, "fetch_llm_tokens_total", map[string]string{"model": defaultModel, "type": "cached"}), 60)
	eq("completion tokens", sample(fams, "fetch_llm_tokens_total", map[string]string{"model": defaultModel, "type": "completion"}), 40)
	if got := sample(fams, "fetch_llm_cost_usd_total", byModel); got < 0.00499 || got > 0.00501 {
		t.Errorf("LLM cost = %v, want 0.005", got)
	}
	// The task: one ended, succeeded with claude, timed; the database
	// holds it as succeeded; the kennel started its CLI.
	succeeded := map[string]string{"harness": "claude", "state": "succeeded"}
	eq("tasks ended", sample(fams, "fetch_tasks_ended_total", nil), 1)
	eq("tasks succeeded with claude", sample(fams, "fetch_tasks_ended_total", succeeded), 1)
	eq("task durations", sample(fams, "fetch_task_duration_seconds", succeeded), 1)
	eq("tasks in the database succeeded with claude", sample(fams, "fetch_tasks", succeeded), 1)
	eq("tasks in the database running", sample(fams, "fetch_tasks", map[string]string{"state": "running"}), 0)
	ge("kennel task exec starts", sample(fams, "fetch_kennel_exec_start_seconds", map[string]string{"engine": "local", "kind": "task"}), 1)
	eq("approvals pending", sample(fams, "fetch_approvals_pending", nil), 0)
	if _, ok := fams["fetch_outbox_backlog_messages"]; !ok {
		t.Error("no fetch_outbox_backlog_messages")
	}

	// Bounded labels: no task, user or conversation id anywhere.
	ids := []string{id, ownerID, friendID, w.channel(ownerID)}
	for name, f := range fams {
		for _, s := range f.Metric {
			for _, l := range s.Label {
				for _, bad := range ids {
					if strings.Contains(l.GetValue(), bad) {
						t.Errorf("%s has label %s=%q, which carries the id %s", name, l.GetName(), l.GetValue(), bad)
					}
				}
			}
		}
	}
}
