package kennel

import "time"

// Metrics is told how long the Pool's execs took to start and its stops
// took to end, by engine name. Its methods are cheap and never block.
type Metrics interface {
	// ExecStarted observes the time from an Exec's call to its process
	// running (container found or created, exec created and attached);
	// kind is ExecTask or ExecCommand.
	ExecStarted(engine, kind string, d time.Duration)
	// Stopped observes the time from a Stop's call to the task's
	// processes being gone.
	Stopped(engine string, d time.Duration)
	// EgressRefused counts n connections the kennel's way out refused
	// on engine, for reason (egress.Reason*).
	EgressRefused(engine, reason string, n int)
}

// Kinds of exec, as Metrics sees them.
const (
	// ExecTask runs a task (ExecSpec.TaskID set): a coding CLI.
	ExecTask = "task"
	// ExecCommand runs an untracked command (git, a tool).
	ExecCommand = "command"
)

// Measure makes the Pool report to m. Call it before the Pool is used.
func (p *Pool) Measure(m Metrics) { p.metrics = m }

// timeStart returns spec's Started hook: it reports the start to the
// Pool's Metrics (and calls the caller's hook, if any).
func (p *Pool) timeStart(engine string, spec ExecSpec) func() {
	begun, next := time.Now(), spec.Started
	kind := ExecCommand
	if spec.TaskID != "" {
		kind = ExecTask
	}
	return func() {
		p.metrics.ExecStarted(engine, kind, time.Since(begun))
		if next != nil {
			next()
		}
	}
}
