package task

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/egress"
)

// Kennel is what KennelRunner needs of the sandbox; *kennel.Kennel
// implements it.
type Kennel interface {
	harness.Runner
	harness.Follower
	Stop(ctx context.Context, workspace, taskID string) error
	Task(ctx context.Context, workspace, taskID string) (kennel.TaskState, error)
	Forget(ctx context.Context, workspace, taskID string) error
}

// KennelRunner is the Runner Fetch uses: harness.Run and harness.Follow
// over the kennel.
type KennelRunner struct {
	Kennel    Kennel
	Harnesses *harness.Registry
	// Credentials are handed to the adapters, which pick their own.
	Credentials harness.Credentials
	// Egress, when set, sends every run through the kennel's way out
	// (the Kennel must have one, kennel.Config.Egress): the credentials
	// the routes carry stay with the proxy, and what it refused of a run
	// becomes the run's KindRefused events when the run ends.
	Egress *Egress
}

// Egress is the kennel's way out as the task engine configures it.
type Egress struct {
	// Key signs the runs' tokens; Fetch keeps it in its data directory.
	Key []byte
	// Hosts returns the hosts the owner allowed, by workspace path; nil
	// allows none beyond the CLIs' own.
	Hosts func(ctx context.Context) (map[string][]string, error)
}

// egressReporter is the part of the kennel that reads the proxy's report
// of a task (*kennel.Pool, *kennel.Kennel).
type egressReporter interface {
	EgressReport(ctx context.Context, workspace, taskID string) (egress.Report, error)
}

// withEgress completes t for a run behind the proxy.
func (r *KennelRunner) withEgress(ctx context.Context, t *harness.Task) error {
	if r.Egress == nil {
		return nil
	}
	cfg := egress.Config{Key: r.Egress.Key, APIs: harness.EgressAPIs(r.Credentials), CLIHosts: harness.CLIHosts()}
	if r.Egress.Hosts != nil {
		hosts, err := r.Egress.Hosts(ctx)
		if err != nil {
			return fmt.Errorf("task: the hosts allowed to the kennel: %w", err)
		}
		cfg.Workspaces = make(map[string][]string, len(hosts))
		for ws, h := range hosts {
			if len(h) > 0 {
				cfg.Workspaces[egress.WorkspaceID(ws)] = h
			}
		}
	}
	t.Egress = &harness.Egress{Config: cfg}
	return nil
}

// reportEgress emits what the proxy refused of t's runs as KindRefused
// events. A report that cannot be read is logged as an error event: the
// run's outcome stands.
func (r *KennelRunner) reportEgress(ctx context.Context, t harness.Task, onEvent func(harness.Event)) {
	rep, ok := r.Kennel.(egressReporter)
	if r.Egress == nil || !ok || onEvent == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), egressReportTimeout)
	defer cancel()
	report, err := rep.EgressReport(ctx, t.Workspace, t.ID)
	if err != nil {
		onEvent(harness.Event{Kind: harness.KindError, Text: "could not read what the kennel's way out refused: " + err.Error()})
		return
	}
	for _, f := range report.Refusals {
		why := f.Reason
		if f.Detail != "" {
			why += ": " + f.Detail
		}
		onEvent(harness.Event{Kind: harness.KindRefused, Host: net.JoinHostPort(f.Host, f.Port), Text: why})
	}
	if report.Dropped > 0 {
		onEvent(harness.Event{Kind: harness.KindRefused, Host: "…", Text: fmt.Sprintf("%d more refused connections", report.Dropped)})
	}
}

// egressReportTimeout bounds the read of the proxy's report after a run.
const egressReportTimeout = 15 * time.Second

// Run implements Runner.
func (r *KennelRunner) Run(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	a, err := r.Harnesses.Get(h)
	if err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	if err := r.withEgress(ctx, &t); err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	defer r.reportEgress(ctx, t, onEvent)
	return harness.Run(ctx, r.Kennel, a, t, r.Credentials, onEvent)
}

// Attach implements Runner. A run whose log the kennel does not have (its
// container is gone) or whose wrapper was killed before recording how it
// ended is ErrGone.
func (r *KennelRunner) Attach(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error) {
	a, err := r.Harnesses.Get(h)
	if err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	out, err := harness.Follow(ctx, r.Kennel, a, t, onEvent)
	r.reportEgress(ctx, t, onEvent)
	if errors.Is(err, kennel.ErrNoTask) || errors.Is(err, kennel.ErrTaskLost) {
		return out, fmt.Errorf("%w: %w", ErrGone, err)
	}
	return out, err
}

// Stop implements Runner.
func (r *KennelRunner) Stop(ctx context.Context, t harness.Task) error {
	return r.Kennel.Stop(ctx, t.Workspace, t.ID)
}

// Status implements Runner.
func (r *KennelRunner) Status(ctx context.Context, t harness.Task) (RunStatus, error) {
	ts, err := r.Kennel.Task(ctx, t.Workspace, t.ID)
	if errors.Is(err, kennel.ErrNoTask) {
		return RunStatus{}, nil
	}
	if err != nil {
		return RunStatus{}, err
	}
	return RunStatus{Known: true, Running: ts.Running}, nil
}

// Forget implements Runner.
func (r *KennelRunner) Forget(ctx context.Context, t harness.Task) error {
	return r.Kennel.Forget(ctx, t.Workspace, t.ID)
}
