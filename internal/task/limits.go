package task

import (
	"context"
	"strings"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/store"
)

// Subscription windows: a CLI that reports the usage of its account's
// windows (harness.KindLimits) has the latest of each recorded per CLI
// (store.CLILimits: /status shows them), and a run about to start on a
// CLI near one of its limits says so in its Started update (NearLimit).

// keepLimits records the windows a batch of a run's events reported.
func (w *eventWriter) keepLimits(batch []harness.Event) {
	var ls []store.CLILimit
	for _, ev := range batch {
		if ev.Kind != harness.KindLimits {
			continue
		}
		for _, l := range ev.Limits {
			ls = append(ls, store.CLILimit{Harness: w.task.Harness, Name: l.Name, UsedPercent: l.UsedPercent, Status: l.Status, ResetsAt: l.ResetsAt})
		}
	}
	if len(ls) == 0 {
		return
	}
	if err := w.e.store.SetCLILimits(w.ctx, ls); err != nil {
		w.e.log.Warn("record the CLI's usage windows", "task", w.task.ID, "harness", w.task.Harness, "err", err)
	}
}

// nearLimit says which windows of t's CLI were, when it last told, used
// to harness.NearPercent or more: "" when none (or none is known).
func (e *Engine) nearLimit(ctx context.Context, t Task) string {
	ls, err := e.store.CLILimits(ctx, t.Harness)
	if err != nil {
		e.log.Warn("read the CLI's usage windows", "task", t.ID, "harness", t.Harness, "err", err)
		return ""
	}
	var near []string
	for _, l := range ls {
		w := harness.Window{Name: l.Name, UsedPercent: l.UsedPercent, Status: l.Status, ResetsAt: l.ResetsAt}
		if w.Near() && (l.ResetsAt.IsZero() || l.ResetsAt.After(e.now())) {
			near = append(near, w.String())
		}
	}
	if len(near) == 0 {
		return ""
	}
	return t.Harness + "'s subscription is near its limit (" + strings.Join(near, "; ") + "): the run may be refused or slowed before it ends."
}
