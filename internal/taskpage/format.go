package taskpage

import (
	"cmp"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

// Time formats of the page, in the owner's time zone.
const (
	dayTime    = "2006-01-02 15:04"
	dayTimeSec = "2006-01-02 15:04:05"
	monthDay   = "Jan 2 15:04:05"
	clockSec   = "15:04:05"
)

// clock is the page's clock and time zone: it says times as the owner
// reads them (FETCH_TIMEZONE).
type clock struct {
	now func() time.Time
	loc *time.Location
}

// when is t as a full date and time with its zone, "" when zero.
func (c clock) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(c.loc).Format(dayTimeSec + " MST")
}

// stamp is a timeline entry's time: the clock alone today, with the date
// on another day (a touch screen opens no tooltip).
func (c clock) stamp(t time.Time) string {
	t, now := t.In(c.loc), c.now().In(c.loc)
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format(clockSec)
	}
	if t.Year() == now.Year() {
		return t.Format(monthDay)
	}
	return t.Format(dayTimeSec)
}

// iso is t for a <time datetime> attribute.
func iso(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// showDuration says how long a task ran; "—" before it started.
func showDuration(d time.Duration, started bool) string {
	switch {
	case !started || d < 0:
		return "—"
	case d < 100*time.Millisecond:
		return "<0.1s"
	case d < time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// listCost is a task's cost in the list: the figure `fetch task ls` shows
// ($ to four places), and whether tokens of a model without a known price
// came with it or alone.
func listCost(t task.Task) string {
	switch {
	case t.CostUSD > 0 && t.CostUnknown:
		return fmt.Sprintf("$%.4f + unpriced tokens", t.CostUSD)
	case t.CostUSD > 0 && t.CostPricedAs != "":
		return fmt.Sprintf("$%.4f (estimated)", t.CostUSD)
	case t.CostUSD > 0:
		return fmt.Sprintf("$%.4f", t.CostUSD)
	case t.CostUnknown:
		return "unpriced tokens only"
	}
	return "—"
}

// spend is what the task's log says about its cost: whether a figure was
// estimated by Fetch from the tokens, and what the current run has cost
// so far (its usage events add up; a spend event is the run's running
// total).
type spend struct {
	estimated bool
	// pricedAs: the model whose price stood in for the CLI's
	// (harness.Usage.PricedAs).
	pricedAs string
	unknown  bool
	runUsage float64
	runSpend float64
}

// add takes in one event of the log; a start of a run begins a new run.
func (s *spend) add(ev harness.Event) {
	if ev.Usage == nil {
		return
	}
	u := *ev.Usage
	if !u.Valid() {
		return
	}
	s.estimated = s.estimated || u.CostEstimated
	s.pricedAs = cmp.Or(s.pricedAs, u.PricedAs)
	s.unknown = s.unknown || u.CostUnknown
	switch ev.Kind {
	case harness.KindUsage:
		s.runUsage += u.CostUSD
	case harness.KindSpend:
		s.runSpend = u.CostUSD
	}
}

// newRun forgets the run so far: a run started.
func (s *spend) newRun() { s.runUsage, s.runSpend = 0, 0 }

// taskCost is the task's cost as `fetch task show` says it
// (progress.Cost), marked estimated when Fetch priced tokens itself; for a
// running task, the cost so far: the earlier runs' and this run's spend.
func taskCost(t task.Task, s spend) string {
	if !t.State.Terminal() {
		sofar := t
		sofar.CostUSD += max(s.runUsage, s.runSpend)
		sofar.CLICostUSD += max(s.runUsage, s.runSpend)
		sofar.CostUnknown = t.CostUnknown || s.unknown
		sofar.CostPricedAs = cmp.Or(t.CostPricedAs, s.pricedAs)
		c := progress.Cost(sofar)
		if c == "" {
			return "none reported yet"
		}
		return withEstimate(c, s, sofar) + " so far"
	}
	t.CostPricedAs = cmp.Or(t.CostPricedAs, s.pricedAs)
	c := progress.Cost(t)
	if c == "" {
		return "none reported"
	}
	return withEstimate(c, s, t)
}

// withEstimate marks c, t's cost, estimated when Fetch priced tokens by
// its table; a cost priced as another model says so already
// (progress.Cost).
func withEstimate(c string, s spend, t task.Task) string {
	if s.estimated && t.CostPricedAs == "" {
		return c + " (estimated by Fetch from the tokens)"
	}
	return c
}
