package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// Defaults of Config.ReconnectMin and Config.ReconnectMax: how often the
// kennel of a run whose engine went out of reach is asked again.
const (
	DefaultReconnectMin = 2 * time.Second
	DefaultReconnectMax = 30 * time.Second
)

// statusTimeout bounds one look at a run in the kennel while its engine
// may be out of reach (a connection the network holds answers nothing).
const statusTimeout = 10 * time.Second

// maxRefollows bounds the attempts at following a run again while its
// engine answers and the run is known: a follow that keeps failing then
// ends the task with its error rather than loop.
const maxRefollows = 3

// runEnd says how carrying a run ended.
type runEnd string

const (
	// endSeen: the run's end was read (or following it failed for good);
	// the task is concluded from the outcome and the error.
	endSeen runEnd = "seen"
	// endGone: the kennel lost the run (its container stopped, the engine
	// restarted without it).
	endGone runEnd = "gone"
	// endReleased: Fetch closes while the run's engine is out of reach; the
	// task stays running, for the next adopting engine.
	endReleased runEnd = "released"
)

// carrier carries one run of a task to its end across lost streams: a
// stream that ends without the run's exit (the connection to the engine
// cut, the engine out of reach) is not the run's end. The kennel is asked
// whether the run still goes; while its engine does not answer the owner
// is told once and the kennel asked again, with a bounded backoff; then
// the run is followed again from its log, read back when it ended
// meanwhile, or reported lost when the kennel has no trace of it.
type carrier struct {
	e   *Engine
	t   Task
	ht  harness.Task
	log *slog.Logger
	add func(harness.Event)
	lim *limits
	// recovered: the run is followed after a restart of Fetch.
	recovered bool
	// steer answers the requests of a two-way run; nil for one-shot.
	steer *steer
	// seen counts the events passed on: a run followed again replays its
	// log from the start, and those are skipped.
	seen int
	// outage: the engine was out of reach during this run; told: the
	// owner was told of the current outage; cancelTold: of a stop that
	// waits for the engine.
	outage, told, cancelTold bool
}

func (c *carrier) pass(ev harness.Event) {
	c.seen++
	c.add(ev)
}

// replay passes on the events of a replayed log after those seen.
func (c *carrier) replay() func(harness.Event) {
	skip := c.seen
	return func(ev harness.Event) {
		if skip > 0 {
			skip--
			return
		}
		c.pass(ev)
	}
}

// carry runs the task's run (or, with attach, follows it) until its end is
// known. ctx is the run's context (a cancel or Close ends it), bg the
// engine's (only Close ends it).
func (c *carrier) carry(ctx, bg context.Context, attach bool) (out harness.Outcome, err error, end runEnd) {
	name := harness.Name(c.t.Harness)
	if attach {
		out, err = c.e.cfg.Runner.Attach(ctx, name, c.ht, c.pass)
	} else {
		out, err = c.run(ctx, name)
	}
	// The prepared line (the worktree the run made) comes once, with the
	// first stream; a later follow may not see it again (its kennel lost
	// the run). The recorded line is the last one seen.
	prepared, recorded := out.Prepared, out.Recorded
	defer func() {
		if prepared != nil {
			out.Prepared = prepared
		}
		if out.Recorded == nil {
			out.Recorded = recorded
		}
	}()
	following := attach // the stream was a follow, whose end stops nothing
	for refollows := 0; ; {
		cause := context.Cause(ctx)
		stopping := errors.Is(cause, errCancelled) || errors.Is(cause, errDetached)
		switch {
		case errors.Is(err, ErrGone) && attach && !c.outage:
			return out, err, endSeen // gone after a restart: conclude says so
		case errors.Is(err, ErrGone):
			return out, err, endGone
		case err == nil && (out.Success || stopping):
			return out, err, endSeen
		case ctx.Err() != nil && !following:
			// Run stopped the run with its stream (the kennel does).
			return out, err, endSeen
		}
		if err != nil {
			c.log.Warn("the run's stream ended without its end; asking the kennel", "err", err)
		}
		st, ok := c.reach(ctx, bg)
		if !ok {
			return out, err, endReleased
		}
		if !st.Known && err != nil && !c.outage && !lostStream(err) {
			// The run failed before the kennel had it (a harness that
			// could not start it): its error says why.
			return out, err, endSeen
		}
		if !st.Known {
			return out, err, endGone
		}
		if err == nil {
			// Its exit was read, and the kennel still knows the run.
			return out, err, endSeen
		}
		if refollows++; refollows > maxRefollows {
			c.log.Error("the run cannot be followed again; giving up", "err", err)
			return out, err, endSeen
		}
		cause = context.Cause(ctx)
		stopping = errors.Is(cause, errCancelled) || errors.Is(cause, errDetached)
		fctx := ctx
		if st.Running && (stopping || c.lim.stopped()) {
			// A stop asked for while the run could not be reached (a
			// cancel, a limit, Close), or a follow that ends: stop it now.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(bg), cleanupTimeout)
			serr := c.e.cfg.Runner.Stop(sctx, c.ht)
			cancel()
			if serr != nil {
				c.log.Warn("stop the run", "err", serr)
				if errors.Is(cause, errDetached) {
					return out, err, endReleased
				}
				continue
			}
		}
		if stopping {
			// The run was stopped: read its end, bounded.
			var cancel context.CancelFunc
			fctx, cancel = context.WithTimeout(context.WithoutCancel(bg), cleanupTimeout)
			defer cancel()
		}
		if st.Running && c.told && !stopping {
			c.reattached()
		}
		c.log.Info("following the run again", "running", st.Running, "seen_events", c.seen)
		out, err = c.e.cfg.Runner.Attach(fctx, name, c.ht, c.replay())
		if prepared == nil {
			prepared = out.Prepared
		}
		if out.Recorded != nil {
			recorded = out.Recorded
		}
		following = !stopping
		if stopping && err == nil {
			return out, err, endSeen
		}
	}
}

// reach asks the kennel about the run until its engine answers, telling
// the owner once when it does not, and of a cancel that has to wait for
// it. It reports false when bg ends first (Fetch closes).
func (c *carrier) reach(ctx, bg context.Context) (RunStatus, bool) {
	wait := c.e.cfg.ReconnectMin
	done := ctx.Done()
	for {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(bg), statusTimeout)
		st, err := c.e.cfg.Runner.Status(sctx, c.ht)
		cancel()
		if err == nil {
			return st, true
		}
		if bg.Err() != nil {
			return RunStatus{}, false
		}
		if !c.told {
			c.log.Warn("the run's engine does not answer; it will be asked again", "err", err)
			c.unreachable(false)
		}
		if ctx.Err() != nil {
			done = nil
			if errors.Is(context.Cause(ctx), errCancelled) && !c.cancelTold {
				c.unreachable(true)
			}
		}
		timer := time.NewTimer(wait)
	sleep:
		for {
			select {
			case <-timer.C:
				break sleep
			case <-bg.Done():
				timer.Stop()
				return RunStatus{}, false
			case <-done:
				// A cancel while the engine is out of reach: said at once,
				// carried out when it answers.
				done = nil
				if errors.Is(context.Cause(ctx), errCancelled) && !c.cancelTold {
					c.unreachable(true)
				}
			}
		}
		wait = min(2*wait, c.e.cfg.ReconnectMax)
	}
}

// engineName is the name of the run's engine ("" for the local one).
func (c *carrier) engineName() string {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return c.e.cfg.Workspaces.Engine(ctx, c.t.Workspace)
}

// unreachable tells the owner that the run's engine does not answer (once
// per outage), or, with cancel, that the stop asked for waits for it.
func (c *carrier) unreachable(cancel bool) {
	c.outage = true
	t := c.t
	if cancel {
		c.cancelTold, t.CancelRequested = true, true
	} else {
		c.told = true
	}
	engine := c.engineName()
	c.e.logEntry(t.ID, KindUnreachable, unreachableData{Engine: engine, Cancel: cancel})
	c.e.notify(context.Background(), Update{Kind: Unreachable, Task: t, Engine: engine, Recovered: c.recovered})
}

// reattached tells the owner that the run is followed again after an
// outage.
func (c *carrier) reattached() {
	c.told, c.cancelTold = false, false
	engine := c.engineName()
	c.e.logEntry(c.t.ID, KindReattached, unreachableData{Engine: engine})
	c.e.notify(context.Background(), Update{Kind: Reattached, Task: c.t, Engine: engine, Recovered: c.recovered})
}

// unreachableData is the data of a KindUnreachable entry (and of a
// KindReattached one after an outage) in a task's event log.
type unreachableData struct {
	Engine string `json:"engine,omitempty"`
	// Cancel: a stop was asked for while the engine was out of reach.
	Cancel bool `json:"cancel,omitempty"`
}

// logEntry appends an entry of Fetch's own to a task's event log.
func (e *Engine) logEntry(id, kind string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := e.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO "+eventsTable+" (task_id, at, kind, data) VALUES (?, ?, ?, ?)", id, store.FormatTime(e.now()), kind, string(b))
		return err
	}); err != nil {
		e.log.Warn("note in the task's log", "task", id, "kind", kind, "err", err)
	}
}

// lostStream: err is a run's stream lost with the connection to its
// engine.
func lostStream(err error) bool {
	return errors.Is(err, kennel.ErrStreamLost) || errors.Is(err, kennel.ErrEngineUnavailable)
}

// stopped reports whether the engine asked for the run to stop (a limit).
func (l *limits) stopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.timedOut || l.capped || l.budget
}

// lostMessage is the error of a task whose run its kennel lost while it
// ran (the engine went away and came back without it).
func (e *Engine) lostMessage(ctx context.Context, t Task) string {
	where := "its kennel"
	if name := e.cfg.Workspaces.Engine(ctx, t.Workspace); name != "" {
		where = "the Docker engine " + name
	}
	return fmt.Sprintf("interrupted: %s of workspace %s went away during the run and its kennel no longer has it. The workspace and what the task changed are kept; run the task again.", where, t.Workspace)
}
