package kennel

import (
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
)

// Sentinel errors. Errors returned by this package wrap them (test with
// errors.Is) together with an operation prefix such as "kennel: exec claude:".
var (
	// ErrTimeout: the run outlived ExecSpec.Timeout and was stopped.
	ErrTimeout = errors.New("run timed out")
	// ErrImageMissing: the kennel image is not present; the error says how to
	// build it.
	ErrImageMissing = errors.New("kennel image missing")
	// ErrEngineUnavailable: the Docker engine does not answer.
	ErrEngineUnavailable = errors.New("docker engine unavailable")
	// ErrInvalid: a spec, a task id, a workspace or the configuration is not
	// acceptable; nothing was run.
	ErrInvalid = errors.New("invalid argument")
	// ErrTaskRunning: a run with the same task id is already going on in this
	// workspace.
	ErrTaskRunning = errors.New("task already running")
	// ErrNoTask: the kennel has no trace of the task (never run here, forgotten,
	// or its container is gone).
	ErrNoTask = errors.New("no such task")
	// ErrAsleep: the workspace's kennel is not running (it sleeps, or was
	// never started) and the exec asked not to start it
	// (ExecSpec.IfRunning); nothing ran.
	ErrAsleep = errors.New("kennel asleep")
	// ErrTaskLost: the task's wrapper was killed before it could record the
	// exit code; the task is over but how it ended is unknown.
	ErrTaskLost = errors.New("task exit lost")
	// ErrInputClosed: the task runs but takes no input: it was not started
	// with ExecSpec.Inbox, its input was closed (CloseInput), or its program
	// no longer reads its stdin.
	ErrInputClosed = errors.New("task takes no input")
	// ErrInputStalled: the task did not take a message in time (its program
	// is not reading its stdin, or another message held the inbox). Nothing
	// was delivered, unless the error says the message was cut.
	ErrInputStalled = errors.New("task not reading its input")
	// ErrShim: the in-container wrapper failed (its message is in the error).
	ErrShim = errors.New("fetch-shim failed")
	// ErrStreamLost: the stream of a run with a TaskID broke (or its exit
	// could not be read) before the run was seen to end: the connection to
	// the engine was cut, not the run. The run goes on in the kennel; Task
	// tells whether it still runs and Follow reads it back.
	ErrStreamLost = errors.New("run's stream lost")
)

// classify turns a Docker error into one of ours where the caller may want to
// branch on it, keeping the original in the chain.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case client.IsErrConnectionFailed(err):
		return fmt.Errorf("%w: %w", ErrEngineUnavailable, err)
	case cerrdefs.IsInvalidArgument(err):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	default:
		return err
	}
}
