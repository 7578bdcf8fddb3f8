package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/metrics"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
)

// taskStates are every task state, for fetch_tasks.
var taskStates = []task.State{task.Queued, task.Running, task.WaitingInput, task.Succeeded, task.Failed, task.Cancelled, task.NeedsAttention}

// newMetrics builds the metrics when FETCH_METRICS_ADDR is set; nil (and
// nothing measured) otherwise.
func newMetrics(cfg Config, db *store.DB) *metrics.Metrics {
	if cfg.MetricsAddr == "" {
		return nil
	}
	states := make([]string, len(taskStates))
	for i, s := range taskStates {
		states[i] = string(s)
	}
	return metrics.New(metrics.Config{Source: db, TaskStates: states, Harnesses: harnessNames(harness.NewRegistry(), cfg.Harness)})
}

// metricsServer serves the metrics at FETCH_METRICS_ADDR while fetch
// serve or fetch chat runs; a nil one serves nothing.
type metricsServer struct{ srv *metrics.Server }

func newMetricsServer(cfg Config, m *metrics.Metrics, log *slog.Logger) *metricsServer {
	if m == nil {
		return nil
	}
	return &metricsServer{srv: metrics.NewServer(m, cfg.MetricsAddr, log.With("component", "metrics"))}
}

func (s *metricsServer) open(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.srv.Open(ctx)
}

func (s *metricsServer) close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	return s.srv.Close(ctx)
}

// meteredLLM counts every completion of the agent's client: its outcome,
// duration, tokens and cost, by the configured model (a bounded label:
// the provider's own model name for the answer is not used).
type meteredLLM struct {
	c     *llm.Client
	m     *metrics.Metrics
	model string
}

// meter wraps c for m; c itself when m is nil.
func meter(c *llm.Client, m *metrics.Metrics) agent.Completer {
	if m == nil {
		return c
	}
	return meteredLLM{c: c, m: m, model: c.Model()}
}

func (l meteredLLM) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := l.c.Complete(ctx, req)
	outcome := metrics.OutcomeOK
	if err != nil {
		outcome = metrics.OutcomeError
	}
	u := resp.Usage
	l.m.LLMCall(l.model, outcome, time.Since(start), metrics.Usage{
		PromptTokens: u.PromptTokens, CachedTokens: u.CachedTokens, CompletionTokens: u.CompletionTokens, CostUSD: u.Cost,
	})
	return resp, err
}

// observed is the engine's Observer with the metrics watching: each task
// end is counted by harness and state, with its duration, and every
// update goes on to next (the feed). A retold end (Recovered, after a
// restart) was counted by the process that saw it.
type observed struct {
	next task.Observer
	m    *metrics.Metrics
}

// observe returns next watched by m; next itself when m is nil.
func observe(next task.Observer, m *metrics.Metrics) task.Observer {
	if m == nil {
		return next
	}
	return observed{next: next, m: m}
}

func (o observed) TaskUpdate(ctx context.Context, u task.Update) {
	if u.Kind == task.Ended && !u.Recovered {
		var d time.Duration
		if t := u.Task; !t.StartedAt.IsZero() && !t.EndedAt.IsZero() {
			d = t.EndedAt.Sub(t.StartedAt)
		}
		o.m.TaskEnded(u.Task.Harness, string(u.Task.State), d)
	}
	if o.next != nil {
		o.next.TaskUpdate(ctx, u)
	}
}
