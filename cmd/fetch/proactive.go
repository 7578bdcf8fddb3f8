package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/metrics"
	"github.com/fetch-dev/fetch/internal/schedule"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/watch"
)

// proactive is what makes Fetch speak first: the reminder and schedule
// runner and the workspace watchers. Both deliver through the
// conversation runtime, so they work on every channel.
type proactive struct {
	sched *schedule.Scheduler
	watch *watch.Manager
}

// newProactive builds both; the watchers' upstream check runs its git in
// the workspace's kennel k.
func newProactive(cfg Config, db *store.DB, log *slog.Logger, k gitrun.Exec, m *metrics.Metrics) *proactive {
	sc := schedule.Config{Store: db, Location: cfg.Location, Logger: log.With("component", "schedule")}
	if m != nil {
		sc.Metrics = m
	}
	return &proactive{
		sched: schedule.New(sc),
		watch: watch.New(watch.Config{Store: db, Root: cfg.Workspaces, GitInterval: cfg.GitInterval, Kennel: k, Logger: log.With("component", "watch")}),
	}
}

// open starts both once the conversation runtime is open: reminders missed
// while Fetch was down go out now.
func (p *proactive) open(ctx context.Context, mgr *conversation.Manager) error {
	if err := p.sched.Open(ctx, mgr); err != nil {
		return err
	}
	if err := p.watch.Open(ctx, mgr); err != nil {
		return errors.Join(err, p.sched.Close(ctx))
	}
	return nil
}

// close stops both, before the conversation runtime closes.
func (p *proactive) close(ctx context.Context) error {
	return errors.Join(p.watch.Close(ctx), p.sched.Close(ctx))
}
