package task

import (
	"context"
	"fmt"
)

// RunStatus is what the kennel knows of a run.
type RunStatus struct {
	// Known: the kennel has a trace of the run (its process or its log).
	Known bool
	// Running: its process is alive.
	Running bool
}

// reconcile settles the running tasks that no live process follows (their
// Fetch process was killed or closed): a run still going in the kennel is
// followed again through its log; one that ended there is read back to its
// end and recorded; one the kennel has no trace of fails "interrupted by
// restart", keeping what its worktree holds. Each is claimed first, so
// that two processes never settle the same task, and the owner is told
// once. Without Config.Adopt nothing is done.
func (e *Engine) reconcile(ctx context.Context) error {
	if !e.cfg.Adopt {
		return nil
	}
	running, err := e.list(ctx, Filter{States: []State{Running}, Limit: 10000})
	if err != nil {
		return err
	}
	for _, t := range running {
		if t.Owner == e.owner || (t.Owner != "" && ownerAlive(t.Owner)) {
			continue
		}
		if err := e.adopt(ctx, t); err != nil {
			e.log.Error("reconcile task", "task", t.ID, "err", err)
		}
	}
	return nil
}

// adopt claims an orphaned running task and settles or follows it.
func (e *Engine) adopt(ctx context.Context, t Task) error {
	claimed, err := e.claim(ctx, &t)
	if err != nil || !claimed {
		return err
	}
	log := e.log.With("task", t.ID)
	if t.RunID == "" {
		log.Warn("task never reached the kennel; failing it")
		e.finish(ctx, t, Failed, "interrupted by restart before it started")
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, statusTimeout)
	st, err := e.cfg.Runner.Status(sctx, e.harnessTask(t))
	cancel()
	if err != nil {
		// Its engine does not answer: followed once it does (the owner is
		// told meanwhile), or reported lost if it comes back without it.
		log.Warn("the kennel of a running task does not answer after a restart; it will be asked again", "err", err)
		e.follow(t, true)
		return nil
	}
	switch {
	case st.Running:
		log.Info("run still going after a restart; following it again")
		e.logEntry(t.ID, KindReattached, unreachableData{})
		e.notify(ctx, Update{Kind: Reattached, Task: t, Recovered: true})
		e.follow(t, true)
	case st.Known:
		log.Info("run ended while Fetch was down; reading it back")
		e.follow(t, true)
	default:
		log.Warn("run gone from the kennel after a restart")
		e.finish(ctx, t, Failed, "interrupted by restart: the run was gone from the kennel")
		e.startQueued(ctx)
	}
	return nil
}

// claim makes this process the owner of a task whose owner is gone,
// unless another process claimed it first.
func (e *Engine) claim(ctx context.Context, t *Task) (bool, error) {
	res, err := e.db.ExecContext(ctx, "UPDATE "+tasksTable+" SET owner = ? WHERE id = ? AND state = 'running' AND owner = ?", e.owner, t.ID, t.Owner)
	if err != nil {
		return false, fmt.Errorf("claim %s: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	t.Owner = e.owner
	return true, nil
}

// settleOrphan records the end of a cancelled run that no process follows:
// the run was stopped; what its log holds is read back and the task ends
// cancelled.
func (e *Engine) settleOrphan(ctx context.Context, t Task) error {
	claimed, err := e.claim(ctx, &t)
	if err != nil {
		return fmt.Errorf("task: cancel %s: %w", t.ID, err)
	}
	if !claimed {
		return nil
	}
	t.CancelRequested = true
	if t.RunID == "" {
		e.finish(ctx, t, Cancelled, "cancelled by the owner")
		return nil
	}
	if !e.isOpen() {
		return fmt.Errorf("task: cancel %s: %w", t.ID, ErrClosed)
	}
	e.follow(t, true)
	if r := e.local(t.ID); r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
			return fmt.Errorf("task: cancel %s: %w", t.ID, context.Cause(ctx))
		}
	}
	return nil
}

// Start runs a queued task now, when its workspace and a slot are free
// (fetch task run hands a task to a worker process this way). It returns
// the task; its state stays Queued when it could not start.
func (e *Engine) Start(ctx context.Context, id string) (Task, error) {
	if !e.isOpen() {
		return Task{}, fmt.Errorf("task: start: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if t.State != Queued {
		return t, fmt.Errorf("task: start %s: it is %s: %w", id, t.State, ErrState)
	}
	started, err := e.claimQueued(ctx, t)
	if err != nil {
		return Task{}, fmt.Errorf("task: start %s: %w", id, err)
	}
	if started.State == Running {
		e.follow(started, false)
	}
	return started, nil
}
