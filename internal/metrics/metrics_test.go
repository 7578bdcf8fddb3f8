package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/metrics"
	"github.com/fetch-dev/fetch/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Every metric Fetch defines passes the Prometheus linter (names with
// units, _total on counters, help text) once it has a series.
func TestMetricsLint(t *testing.T) {
	m := metrics.New(metrics.Config{})
	touch(m)
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "fetch_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

// touch records one of everything.
func touch(m *metrics.Metrics) {
	m.MessageIn("instinct")
	m.MessageOut("reply", 2)
	m.InstinctReply(3 * time.Millisecond)
	m.LLMCall("anthropic/claude-sonnet-4.5", metrics.OutcomeOK, 2*time.Second, metrics.Usage{PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 50, CostUSD: 0.0123})
	m.LLMCall("anthropic/claude-sonnet-4.5", metrics.OutcomeError, time.Second, metrics.Usage{})
	m.TaskEnded("claude", "succeeded", 90*time.Second)
	m.ExecStarted("local", "task", 40*time.Millisecond)
	m.Stopped("local", 300*time.Millisecond)
	m.RateLimited(1500 * time.Millisecond)
	m.Fired("remind", 20*time.Millisecond)
}

// The counters add up as recorded: tokens split into uncached prompt,
// cached and completion; cost by model; a nil *Metrics records nothing
// and does not panic.
func TestMetricsRecord(t *testing.T) {
	m := metrics.New(metrics.Config{})
	touch(m)
	touch(m)
	fams := parse(t, gather(t, m))
	const model = "anthropic/claude-sonnet-4.5"
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fetch_messages_received_total", map[string]string{"kind": "instinct"}, 2},
		{"fetch_messages_sent_total", map[string]string{"kind": "reply"}, 4},
		{"fetch_instinct_reply_seconds", nil, 2},
		{"fetch_llm_requests_total", map[string]string{"model": model, "outcome": "ok"}, 2},
		{"fetch_llm_requests_total", map[string]string{"model": model, "outcome": "error"}, 2},
		{"fetch_llm_request_duration_seconds", map[string]string{"model": model}, 4},
		{"fetch_llm_tokens_total", map[string]string{"model": model, "type": "prompt"}, 800},
		{"fetch_llm_tokens_total", map[string]string{"model": model, "type": "cached"}, 1200},
		{"fetch_llm_tokens_total", map[string]string{"model": model, "type": "completion"}, 100},
		{"fetch_llm_cost_usd_total", map[string]string{"model": model}, 0.0246},
		{"fetch_tasks_ended_total", map[string]string{"harness": "claude", "state": "succeeded"}, 2},
		{"fetch_task_duration_seconds", map[string]string{"harness": "claude", "state": "succeeded"}, 2},
		{"fetch_kennel_exec_start_seconds", map[string]string{"engine": "local", "kind": "task"}, 2},
		{"fetch_kennel_stop_seconds", map[string]string{"engine": "local"}, 2},
		{"fetch_discord_rate_limited_total", nil, 2},
		{"fetch_discord_rate_limit_wait_seconds_total", nil, 3},
		{"fetch_schedule_lag_seconds", map[string]string{"kind": "remind"}, 2},
	}
	for _, c := range checks {
		got, ok := value(fams, c.name, c.labels)
		if !ok {
			t.Errorf("%s%v: no such series", c.name, c.labels)
			continue
		}
		if diff := got - c.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	var none *metrics.Metrics
	touch(none)
}

// The gauges come from the store at scrape time: tasks by state and
// harness (every configured pair shown, zero included), the messages not
// yet delivered and the approvals waiting; they follow the store.
func TestStoreGauges(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := metrics.New(metrics.Config{Source: db, TaskStates: []string{"queued", "running", "succeeded"}, Harnesses: []string{"claude", "codex"}})

	fams := parse(t, gather(t, m))
	for _, s := range []string{"queued", "running", "succeeded"} {
		for _, h := range []string{"claude", "codex"} {
			if v, ok := value(fams, "fetch_tasks", map[string]string{"state": s, "harness": h}); !ok || v != 0 {
				t.Errorf("fetch_tasks{state=%s,harness=%s} = %v (present %v), want 0", s, h, v, ok)
			}
		}
	}

	now := store.FormatTime(time.Now())
	for i, row := range [][2]string{{"running", "claude"}, {"succeeded", "claude"}, {"succeeded", "claude"}, {"failed", "codex"}} {
		_, err := db.SQL().ExecContext(ctx, "INSERT INTO tasks (id, workspace, goal, harness, state, created_at, updated_at) VALUES (?, ?, 'g', ?, ?, ?, ?)",
			"t"+string(rune('a'+i)), "/ws/"+string(rune('a'+i)), row[1], row[0], now, now)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.EnsureConversation(ctx, "c1", "test", "u1"); err != nil {
		t.Fatal(err)
	}
	ids, err := db.AddOutbound(ctx, "c1", store.Outgoing{Body: "one"}, store.Outgoing{Body: "two"}, store.Outgoing{Body: "three"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.MarkSent(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddPrompt(ctx, store.Prompt{ConversationID: "c1", Kind: store.Approval, Body: "delete workspace app?"}); err != nil {
		t.Fatal(err)
	}

	fams = parse(t, gather(t, m))
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fetch_tasks", map[string]string{"state": "running", "harness": "claude"}, 1},
		{"fetch_tasks", map[string]string{"state": "succeeded", "harness": "claude"}, 2},
		{"fetch_tasks", map[string]string{"state": "queued", "harness": "claude"}, 0},
		// A state or harness the configuration does not list still shows.
		{"fetch_tasks", map[string]string{"state": "failed", "harness": "codex"}, 1},
		{"fetch_outbox_backlog_messages", nil, 2},
		{"fetch_approvals_pending", nil, 1},
	} {
		if v, ok := value(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if v, _ := value(fams, "fetch_metrics_store_errors_total", nil); v != 0 {
		t.Errorf("store errors = %v", v)
	}
}

// failing is a Source that cannot answer.
type failing struct{}

func (failing) Gauges(context.Context) (store.Gauges, error) {
	return store.Gauges{}, errors.New("database is locked")
}

// A store that cannot answer leaves its gauges out (rather than showing
// zeros) and counts the failure; the rest of the scrape still works.
func TestStoreGaugesFail(t *testing.T) {
	m := metrics.New(metrics.Config{Source: failing{}, TaskStates: []string{"queued"}, Harnesses: []string{"claude"}})
	m.MessageIn("instinct")
	fams := parse(t, gather(t, m))
	if _, ok := fams["fetch_tasks"]; ok {
		t.Error("fetch_tasks shown although the store failed")
	}
	if v, _ := value(fams, "fetch_metrics_store_errors_total", nil); v != 1 {
		t.Errorf("store errors = %v, want 1", v)
	}
	if v, _ := value(fams, "fetch_messages_received_total", map[string]string{"kind": "instinct"}); v != 1 {
		t.Errorf("messages received = %v, want 1", v)
	}
}

// The server serves the registry at /metrics in the text format on the
// address it was given (port 0: one is chosen), nothing else, and stops
// on Close.
func TestServer(t *testing.T) {
	m := metrics.New(metrics.Config{})
	m.MessageIn("stop")
	s := metrics.NewServer(m, "127.0.0.1:0", quiet())
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	fams := parse(t, string(body))
	if v, _ := value(fams, "fetch_messages_received_total", map[string]string{"kind": "stop"}); v != 1 {
		t.Errorf("scraped fetch_messages_received_total{kind=stop} = %v, want 1", v)
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	if resp, err := http.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /: %s, want 404", resp.Status)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("still serving after Close")
	}
}

// A server that cannot listen says so.
func TestServerListenError(t *testing.T) {
	s := metrics.NewServer(metrics.New(metrics.Config{}), "127.0.0.1:99999", quiet())
	if err := s.Open(t.Context()); err == nil || !strings.Contains(err.Error(), "127.0.0.1:99999") {
		t.Fatalf("Open on a bad port: %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("Close of a server never opened: %v", err)
	}
}

func gather(t testing.TB, m *metrics.Metrics) string {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// parse reads the text exposition format as Prometheus does.
func parse(t testing.TB, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse metrics: %v\n%s", err, text)
	}
	return fams
}

// value is a counter's or gauge's value, or a histogram's count, of the
// series with exactly labels.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}
