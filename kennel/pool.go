package kennel

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fetch-dev/fetch/kennel/egress"
)

// Pool is the kennels of several Docker engines, one Kennel per engine.
// Each workspace lives on one engine (its placement, which the caller
// keeps); the Pool routes every call by its workspace, so that the rest of
// Fetch uses it like one Kennel.
type Pool struct {
	kennels map[string]*Kennel
	names   []string
	def     string
	place   func(workspace string) string
	metrics Metrics // nil: nothing measured
}

// NewPool builds a Pool over kennels by engine name. place returns the
// engine of a workspace ("" for def, the engine a workspace without a
// placement uses).
func NewPool(def string, kennels map[string]*Kennel, place func(workspace string) string) (*Pool, error) {
	if kennels[def] == nil {
		return nil, fmt.Errorf("kennel: pool: no engine %q: %w", def, ErrInvalid)
	}
	names := make([]string, 0, len(kennels))
	for n := range kennels {
		names = append(names, n)
	}
	slices.Sort(names)
	return &Pool{kennels: kennels, names: names, def: def, place: place}, nil
}

// Names returns the engines' names, sorted.
func (p *Pool) Names() []string { return slices.Clone(p.names) }

// Default is the name of the engine of workspaces without a placement.
func (p *Pool) Default() string { return p.def }

// Engine returns the named engine's Kennel, nil when there is none.
func (p *Pool) Engine(name string) *Kennel { return p.kennels[name] }

// EngineOf is the name of a workspace's engine.
func (p *Pool) EngineOf(workspace string) string {
	if p.place != nil {
		if n := p.place(workspace); n != "" {
			return n
		}
	}
	return p.def
}

// For returns the Kennel of a workspace's engine.
func (p *Pool) For(workspace string) (*Kennel, error) {
	_, k, err := p.route(workspace)
	return k, err
}

// route returns the name and the Kennel of a workspace's engine.
func (p *Pool) route(workspace string) (string, *Kennel, error) {
	name := p.EngineOf(workspace)
	k := p.kennels[name]
	if k == nil {
		return name, nil, fmt.Errorf("kennel: workspace %s is on engine %q, which is unavailable or not configured (FETCH_ENGINES): %w", workspace, name, ErrEngineUnavailable)
	}
	return name, k, nil
}

// named says which engine an error came from, when it is not the default
// one.
func (p *Pool) named(workspace string, err error) error {
	if err == nil {
		return nil
	}
	if name := p.EngineOf(workspace); name != p.def {
		return fmt.Errorf("engine %s: %w", name, err)
	}
	return err
}

// Exec runs spec in its workspace's kennel (Kennel.Exec).
func (p *Pool) Exec(ctx context.Context, spec ExecSpec, fn LineHandler) (Result, error) {
	engine, k, err := p.route(spec.Workspace)
	if err != nil {
		return Result{}, err
	}
	if p.metrics != nil {
		spec.Started = p.timeStart(engine, spec)
	}
	res, err := k.Exec(ctx, spec, fn)
	return res, p.named(spec.Workspace, err)
}

// Follow reads a run back (Kennel.Follow).
func (p *Pool) Follow(ctx context.Context, workspace, taskID string, fn LineHandler) (Result, error) {
	k, err := p.For(workspace)
	if err != nil {
		return Result{}, err
	}
	res, err := k.Follow(ctx, workspace, taskID, fn)
	return res, p.named(workspace, err)
}

// Task reports a run (Kennel.Task).
func (p *Pool) Task(ctx context.Context, workspace, taskID string) (TaskState, error) {
	k, err := p.For(workspace)
	if err != nil {
		return TaskState{}, err
	}
	ts, err := k.Task(ctx, workspace, taskID)
	return ts, p.named(workspace, err)
}

// Stop stops a run (Kennel.Stop).
func (p *Pool) Stop(ctx context.Context, workspace, taskID string) error {
	engine, k, err := p.route(workspace)
	if err != nil {
		return err
	}
	start := time.Now()
	err = k.Stop(ctx, workspace, taskID)
	if p.metrics != nil && err == nil {
		p.metrics.Stopped(engine, time.Since(start))
	}
	return p.named(workspace, err)
}

// Forget drops a run's files (Kennel.Forget).
func (p *Pool) Forget(ctx context.Context, workspace, taskID string) error {
	k, err := p.For(workspace)
	if err != nil {
		return err
	}
	return p.named(workspace, k.Forget(ctx, workspace, taskID))
}

// Remove removes a workspace's container (Kennel.Remove).
func (p *Pool) Remove(ctx context.Context, workspace string) error {
	k, err := p.For(workspace)
	if err != nil {
		return err
	}
	return p.named(workspace, k.Remove(ctx, workspace))
}

// RemoveVolume removes a workspace's volume (Kennel.RemoveVolume).
func (p *Pool) RemoveVolume(ctx context.Context, workspace string) error {
	k, err := p.For(workspace)
	if err != nil {
		return err
	}
	return p.named(workspace, k.RemoveVolume(ctx, workspace))
}

// Send writes a message to a run's stdin (Kennel.Send).
func (p *Pool) Send(ctx context.Context, workspace, taskID string, msg []byte) error {
	k, err := p.For(workspace)
	if err != nil {
		return err
	}
	return p.named(workspace, k.Send(ctx, workspace, taskID, msg))
}

// CloseInput ends a run's stdin (Kennel.CloseInput).
func (p *Pool) CloseInput(ctx context.Context, workspace, taskID string) error {
	k, err := p.For(workspace)
	if err != nil {
		return err
	}
	return p.named(workspace, k.CloseInput(ctx, workspace, taskID))
}

// EgressReport reads what the proxy of a workspace's engine saw of a task.
func (p *Pool) EgressReport(ctx context.Context, workspace, taskID string) (egress.Report, error) {
	engine, k, err := p.route(workspace)
	if err != nil {
		return egress.Report{}, err
	}
	r, err := k.EgressReport(ctx, workspace, taskID)
	if p.metrics != nil {
		reasons := map[string]int{}
		for _, f := range r.Refusals {
			reasons[f.Reason]++
		}
		if r.Dropped > 0 {
			reasons["dropped"] += r.Dropped
		}
		for reason, n := range reasons {
			p.metrics.EgressRefused(engine, reason, n)
		}
	}
	return r, err
}
