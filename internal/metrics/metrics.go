// Package metrics is Fetch's Prometheus instrumentation: every metric's
// name, help and labels, declared once here, on a registry of its own
// (never the client library's global one), served at /metrics by Server.
//
// What happens in this process (messages, LLM calls, task ends, kennel
// execs and stops, Discord rate limits, scheduler firings) is counted by
// the packages where it happens, through small interfaces each of them
// declares (conversation.Metrics, kennel.Metrics, …), which *Metrics
// satisfies; cmd/fetch wires it. What the database holds (tasks by state,
// the outbox backlog, pending approvals) is read from the store at scrape
// time, so every process sharing the database shows the same numbers and
// nothing drifts.
//
// Labels are bounded: message kinds, configured model names, harness
// names, task states, engine names, outcomes. Never a task, user or
// conversation id.
//
// Imports: the Prometheus client, and store for the gauges' type (the
// store itself is reached through the Source interface). Concurrency: every method of
// *Metrics is safe for concurrent use, never blocks (atomic updates) and
// is a no-op on a nil *Metrics.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every metric.
const namespace = "fetch"

// Label names.
const (
	labelKind    = "kind"
	labelReason  = "reason"
	labelModel   = "model"
	labelOutcome = "outcome"
	labelType    = "type"
	labelHarness = "harness"
	labelState   = "state"
	labelEngine  = "engine"
)

// Outcomes of an LLM call.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Token types: disjoint parts of a call's tokens, summing to its total.
const (
	// TokensPrompt are the prompt tokens not read from the provider's
	// cache.
	TokensPrompt = "prompt"
	// TokensCached are the prompt tokens read from the cache.
	TokensCached = "cached"
	// TokensCompletion are the tokens of the answer.
	TokensCompletion = "completion"
)

// Buckets, in seconds.
var (
	// fastBuckets: an instinct's reply is a few milliseconds of SQLite
	// writes; a kennel exec starts in tens of milliseconds, or seconds when
	// its container is created.
	fastBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	// llmBuckets: one completion, up to the turn's limit.
	llmBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	// taskBuckets: a task run, from seconds to the task timeout's hours.
	taskBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400}
	// lagBuckets: how late a job fires after its due time (the scheduler
	// wakes at the due time; late runs after a restart are minutes).
	lagBuckets = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 15, 60, 300, 3600}
)

// Metrics is Fetch's metrics. Build it with New.
type Metrics struct {
	reg *prometheus.Registry

	messagesIn    *prometheus.CounterVec
	messagesOut   *prometheus.CounterVec
	instinct      prometheus.Histogram
	llmCalls      *prometheus.CounterVec
	llmSeconds    *prometheus.HistogramVec
	llmTokens     *prometheus.CounterVec
	llmCost       *prometheus.CounterVec
	tasksEnded    *prometheus.CounterVec
	taskSeconds   *prometheus.HistogramVec
	execSeconds   *prometheus.HistogramVec
	stopSeconds   *prometheus.HistogramVec
	egressRefused *prometheus.CounterVec
	rateLimited   prometheus.Counter
	rateWait      prometheus.Counter
	scheduleLag   *prometheus.HistogramVec
	scrapeErrors  prometheus.Counter
}

// Config is what New needs.
type Config struct {
	// Source answers the gauges read at scrape time; nil leaves them out.
	Source Source
	// TaskStates and Harnesses are every task state and harness name:
	// fetch_tasks shows each pair, zero included, so that a state's series
	// does not vanish when it empties.
	TaskStates []string
	Harnesses  []string
	// Timeout bounds a scrape's look at the store; DefaultTimeout when 0.
	Timeout time.Duration
}

// New builds the metrics and their registry, with the Go runtime's and
// the process's collectors.
func New(cfg Config) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.messagesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "messages_received_total",
		Help: "Messages received from users and handled, by how they were taken: stop, instinct, prompt (an open question or approval took it), refused (too long), or the intent class (conversation, inquiry, action, clarify).",
	}, []string{labelKind})
	m.messagesOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "messages_sent_total",
		Help: "Messages Fetch queued for delivery, by kind: reply (to a message), progress (a turn's or task's status), result (a task's end), notice (reminders, schedules, watches, other notices).",
	}, []string{labelKind})
	m.instinct = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "instinct_reply_seconds",
		Help:    "Time from receiving a message an instinct answers (a command, a stop) to its reply being queued for delivery.",
		Buckets: fastBuckets,
	})
	m.llmCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "llm_requests_total",
		Help: "LLM completion requests (retries included), by configured model and outcome (ok, error).",
	}, []string{labelModel, labelOutcome})
	m.llmSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "llm_request_duration_seconds",
		Help:    "Duration of LLM completion requests, by configured model.",
		Buckets: llmBuckets,
	}, []string{labelModel})
	m.llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "llm_tokens_total",
		Help: "LLM tokens by configured model and type: prompt (not from the provider's cache), cached (prompt tokens read from the cache), completion.",
	}, []string{labelModel, labelType})
	m.llmCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "llm_cost_usd_total",
		Help: "LLM cost in US dollars as the provider reports it, by configured model.",
	}, []string{labelModel})
	m.tasksEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "tasks_ended_total",
		Help: "Tasks that reached a terminal state in this process, by harness and state.",
	}, []string{labelHarness, labelState})
	m.taskSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "task_duration_seconds",
		Help:    "Wall time of tasks from their start to their end, by harness and final state.",
		Buckets: taskBuckets,
	}, []string{labelHarness, labelState})
	m.execSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "kennel_exec_start_seconds",
		Help:    "Time from a kennel exec's request to its process running (container found or created, exec created and attached), by engine and kind (task, command).",
		Buckets: fastBuckets,
	}, []string{labelEngine, labelKind})
	m.egressRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "egress_refused_total",
		Help: "Connections from the kennels that their way out (the egress proxy) refused, by engine and reason (not_allowed, address, token, resolve, route; dropped: refused beyond what the proxy kept).",
	}, []string{labelEngine, labelReason})
	m.stopSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "kennel_stop_seconds",
		Help:    "Time from a kennel stop's request to the task's processes being gone, by engine.",
		Buckets: fastBuckets,
	}, []string{labelEngine})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "discord_rate_limited_total",
		Help: "Discord REST requests answered 429 (too many requests), each then waited out and retried.",
	})
	m.rateWait = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "discord_rate_limit_wait_seconds_total",
		Help: "Time spent waiting out Discord's 429 answers (their retry_after).",
	})
	m.scheduleLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "schedule_lag_seconds",
		Help:    "How late reminders and scheduled runs were handed over after their due time, by kind (remind, run).",
		Buckets: lagBuckets,
	}, []string{labelKind})
	m.scrapeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "metrics_store_errors_total",
		Help: "Scrapes whose look at the store failed (the store's gauges were left out).",
	})
	m.reg.MustRegister(m.egressRefused)
	m.reg.MustRegister(m.messagesIn, m.messagesOut, m.instinct, m.llmCalls, m.llmSeconds, m.llmTokens, m.llmCost,
		m.tasksEnded, m.taskSeconds, m.execSeconds, m.stopSeconds, m.rateLimited, m.rateWait, m.scheduleLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.Source != nil {
		// The store's collector collects the counter of its failures
		// itself, after its look: a scrape counts its own failure (the
		// registry collects its collectors at the same time).
		m.reg.MustRegister(newStoreCollector(cfg, m.scrapeErrors))
	} else {
		m.reg.MustRegister(m.scrapeErrors)
	}
	return m
}

// Registry is the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// MessageIn counts a handled inbound message by kind.
func (m *Metrics) MessageIn(kind string) {
	if m == nil {
		return
	}
	m.messagesIn.WithLabelValues(kind).Inc()
}

// MessageOut counts n messages queued for delivery, by kind.
func (m *Metrics) MessageOut(kind string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.messagesOut.WithLabelValues(kind).Add(float64(n))
}

// InstinctReply observes the time from a message's receipt to its
// instinct's reply being queued.
func (m *Metrics) InstinctReply(d time.Duration) {
	if m == nil {
		return
	}
	m.instinct.Observe(d.Seconds())
}

// Usage is one LLM call's tokens and cost.
type Usage struct {
	// PromptTokens counts all input tokens, CachedTokens those of them
	// read from the provider's cache.
	PromptTokens     int
	CachedTokens     int
	CompletionTokens int
	CostUSD          float64
}

// LLMCall counts one completion request of model: its outcome, duration,
// and (when it succeeded) its tokens and cost.
func (m *Metrics) LLMCall(model, outcome string, d time.Duration, u Usage) {
	if m == nil {
		return
	}
	m.llmCalls.WithLabelValues(model, outcome).Inc()
	m.llmSeconds.WithLabelValues(model).Observe(d.Seconds())
	cached := min(max(u.CachedTokens, 0), max(u.PromptTokens, 0))
	if n := u.PromptTokens - cached; n > 0 {
		m.llmTokens.WithLabelValues(model, TokensPrompt).Add(float64(n))
	}
	if cached > 0 {
		m.llmTokens.WithLabelValues(model, TokensCached).Add(float64(cached))
	}
	if u.CompletionTokens > 0 {
		m.llmTokens.WithLabelValues(model, TokensCompletion).Add(float64(u.CompletionTokens))
	}
	if u.CostUSD > 0 {
		m.llmCost.WithLabelValues(model).Add(u.CostUSD)
	}
}

// TaskEnded counts a task that reached a terminal state after running
// for d (zero when it never ran: not observed in the histogram).
func (m *Metrics) TaskEnded(harness, state string, d time.Duration) {
	if m == nil {
		return
	}
	m.tasksEnded.WithLabelValues(harness, state).Inc()
	if d > 0 {
		m.taskSeconds.WithLabelValues(harness, state).Observe(d.Seconds())
	}
}

// ExecStarted observes how long a kennel exec took to start on engine.
func (m *Metrics) ExecStarted(engine, kind string, d time.Duration) {
	if m == nil {
		return
	}
	m.execSeconds.WithLabelValues(engine, kind).Observe(d.Seconds())
}

// Stopped observes how long a kennel stop took on engine.
func (m *Metrics) Stopped(engine string, d time.Duration) {
	if m == nil {
		return
	}
	m.stopSeconds.WithLabelValues(engine).Observe(d.Seconds())
}

// EgressRefused counts n connections refused by the kennel's way out.
func (m *Metrics) EgressRefused(engine, reason string, n int) {
	if m == nil {
		return
	}
	m.egressRefused.WithLabelValues(engine, reason).Add(float64(n))
}

// RateLimited counts a Discord 429 and the wait it asked for.
func (m *Metrics) RateLimited(wait time.Duration) {
	if m == nil {
		return
	}
	m.rateLimited.Inc()
	if wait > 0 {
		m.rateWait.Add(wait.Seconds())
	}
}

// Fired observes how late a scheduled job of kind was handed over.
func (m *Metrics) Fired(kind string, lag time.Duration) {
	if m == nil {
		return
	}
	m.scheduleLag.WithLabelValues(kind).Observe(max(lag, 0).Seconds())
}
