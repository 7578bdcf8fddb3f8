package metrics

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fetch-dev/fetch/internal/store"
)

// Source is where the scrape-time gauges come from; *store.DB satisfies
// it.
type Source interface {
	Gauges(ctx context.Context) (store.Gauges, error)
}

// DefaultTimeout bounds a scrape's look at the store.
const DefaultTimeout = 5 * time.Second

// storeCollector reads the gauges from the store at each scrape.
type storeCollector struct {
	src       Source
	states    []string
	harnesses []string
	timeout   time.Duration
	errors    prometheus.Counter

	tasks     *prometheus.Desc
	backlog   *prometheus.Desc
	approvals *prometheus.Desc
}

func newStoreCollector(cfg Config, errors prometheus.Counter) *storeCollector {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &storeCollector{
		src: cfg.Source, states: cfg.TaskStates, harnesses: cfg.Harnesses, timeout: timeout, errors: errors,
		tasks: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "tasks"),
			"Tasks in the database by state and harness (every process sharing it sees the same).", []string{labelState, labelHarness}, nil),
		backlog: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "outbox_backlog_messages"),
			"Outbound messages stored and not delivered yet.", nil, nil),
		approvals: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "approvals_pending"),
			"Approvals waiting for the owner's yes or no.", nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	c.errors.Describe(ch)
	ch <- c.tasks
	ch <- c.backlog
	ch <- c.approvals
}

// Collect reads the store once. When that fails the gauges are left out
// of this scrape (and counted in fetch_metrics_store_errors_total, which
// this scrape shows) rather than shown as zero.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	g, err := c.src.Gauges(ctx)
	if err != nil {
		c.errors.Inc()
	}
	c.errors.Collect(ch)
	if err != nil {
		return
	}
	type pair struct{ state, harness string }
	counts := map[pair]int{}
	for _, s := range c.states {
		for _, h := range c.harnesses {
			counts[pair{s, h}] = 0
		}
	}
	for _, t := range g.Tasks {
		counts[pair{t.State, t.Harness}] += t.N
	}
	keys := make([]pair, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.state, b.state), cmp.Compare(a.harness, b.harness))
	})
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(c.tasks, prometheus.GaugeValue, float64(counts[k]), k.state, k.harness)
	}
	ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(g.OutboxBacklog))
	ch <- prometheus.MustNewConstMetric(c.approvals, prometheus.GaugeValue, float64(g.ApprovalsPending))
}
