package kennel

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/fetch-dev/fetch/kennel/egress"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// ExecSpec describes one run in the kennel.
type ExecSpec struct {
	Workspace string        // absolute host path of the workspace; selects the container (mounted at the same path)
	Dir       string        // working directory inside the container (absolute); defaults to Workspace
	Argv      []string      // argv, never through a shell
	Env       []string      // KEY=VALUE, only what this run needs
	TaskID    string        // non-empty: run under fetch-shim in its own process group with pid and log files, stoppable via Stop
	Timeout   time.Duration // 0 = none; on expiry the run is stopped like Stop and Exec returns ErrTimeout (Result still filled)
	// Inbox (with TaskID, without Stdin): the run's stdin stays open for
	// its whole life and takes the messages of Send, from this Kennel or
	// any later one (after a restart, with Follow for the output), until
	// CloseInput or the end of the run.
	Inbox bool

	// Stdin, when set, is copied to the run's stdin, which is then closed;
	// nil: stdin is /dev/null. Exec waits for the copy to end: a reader must
	// return (EOF or an error) once the run is over — a file, a buffer, a
	// pipe whose writer closes. A read error stops the run.
	Stdin io.Reader
	// Stdout, when set, receives stdout raw (not split into lines, binary
	// safe) and the LineHandler sees only stderr. A write error stops the
	// run. nil: stdout goes to the LineHandler line by line.
	Stdout io.Writer
	// Prepare, when set (with TaskID), runs first in the same exec: its
	// steps start in Workspace, with Prepare.Env as their environment
	// (not Env), and Argv then starts in Dir, which the steps may create
	// (a task's worktree). Their result reaches the LineHandler as one
	// Prepared line before any other (Follow delivers it again); when a
	// step that may not fail failed, Argv does not start and the exit
	// code is shim.ExitPrepareFailed.
	Prepare *shim.Batch
	// Record, when set (with TaskID), runs in the same exec after Argv
	// ended, however it ended (stopped, timed out), and after the run's
	// leftovers are gone: its steps start in Workspace, with Record.Env as
	// their environment, and "${name}" in them is replaced by Prepare's
	// captures. Its result reaches the LineHandler as a Recorded line
	// after all of the run's output (Follow delivers it again). It does not
	// run when Prepare failed.
	Record *shim.Batch
	// Started, when set, is called once the process runs (its exec is
	// created and attached), before any output is read. It must not
	// block. Pool sets it to time the start for its Metrics.
	Started func()
	// IfRunning runs only in a container that is running already: when
	// the workspace's kennel sleeps (or was never started), nothing is
	// created or started and Exec returns ErrAsleep. For reads that must
	// not wake a kennel (listing workspaces, a prompt's git state).
	IfRunning bool
	// Egress (with TaskID, on a Kennel with Config.Egress) sends the
	// run's traffic through the kennel's way out: the proxy is made sure
	// of and given Egress.Config before the run starts (a proxy that
	// cannot be is ErrEgressDown, and the run does not start), and the
	// run's environment names the proxy with Egress.Token.
	Egress *EgressRun
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the process's exit code; 128+n when it died of signal n;
	// 126 or 127 when it could not be started.
	ExitCode int
	// StderrTail is the end of stderr (Config.StderrTail bytes at most).
	StderrTail []byte
	// Stopped: the run was ended by Stop, by the cancellation of its context
	// or by its timeout.
	Stopped bool
	// TimedOut: the run was stopped because it outlived ExecSpec.Timeout.
	TimedOut bool
}

// ReservedEnvPrefix starts the names of Fetch's own settings (its Discord token
// among them); no run may be given such a variable.
const ReservedEnvPrefix = "FETCH_"

// Timing of the end of a run.
const (
	// restopWait is how long a stopped run's stream may stay open before the
	// stop is repeated: a stop that raced the wrapper's start found nothing.
	restopWait = time.Second
	// restopAttempts bounds those repeats.
	restopAttempts = 3
	// exitWait bounds the wait for Docker to record an exec's exit code after
	// its stream ended, and cleanup after a cancelled run.
	exitWait = 10 * time.Second
	// exitPollFirst is the first pause between those inspections; it doubles.
	exitPollFirst = 2 * time.Millisecond
)

// Exec runs spec.Argv in the workspace's container (created on demand) and
// streams its output to fn line by line. Every run goes through fetch-shim in
// a process group of its own, so that it can always be stopped; without a
// TaskID it keeps no files and cannot be named by Stop. stdin is /dev/null
// unless spec.Stdin is set; spec.Stdout takes stdout raw.
//
// A non-zero exit code is a Result, not an error. Errors are infrastructure
// failures, ErrTimeout after a timeout, and the cause of ctx (wrapped) when ctx
// was cancelled; in the last two cases the run has been stopped and Result is
// filled. A run with a TaskID whose stream broke before it was seen to end
// (the connection to its engine cut) is ErrStreamLost and is not stopped:
// Task and Follow find it; an untracked one is stopped.
func (k *Kennel) Exec(ctx context.Context, spec ExecSpec, fn LineHandler) (Result, error) {
	op := "kennel: exec"
	if len(spec.Argv) > 0 {
		op += " " + path.Base(spec.Argv[0])
	}
	if err := checkSpec(spec); err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	id, ephemeral := spec.TaskID, spec.TaskID == ""
	if ephemeral {
		id = ephemeralID()
	}
	dir := spec.Dir
	if dir == "" {
		dir = spec.Workspace
	}
	argv := spec.Argv
	if spec.Prepare != nil {
		var err error
		if argv, err = shim.PrepareArgv(*spec.Prepare, dir, spec.Argv); err != nil {
			return Result{}, fmt.Errorf("%s: %w: %w", op, err, ErrInvalid)
		}
		dir = spec.Workspace // the steps may make spec.Dir
	}
	env := spec.Env
	if spec.Egress != nil {
		if err := k.ensureEgress(ctx, spec.Egress); err != nil {
			return Result{ExitCode: -1}, fmt.Errorf("%s: %w", op, err)
		}
		env = append(slices.Clip(env), egress.Env(spec.Egress.Token)...)
	}
	opts := k.runOptions(ephemeral, spec.Stdin != nil, spec.Inbox)
	if spec.Record != nil {
		var err error
		if opts.Record, err = shim.RecordProgram(*spec.Record); err != nil {
			return Result{}, fmt.Errorf("%s: %w: %w", op, err, ErrInvalid)
		}
	}
	res, err := k.run(ctx, runSpec{
		workspace: spec.Workspace,
		task:      id,
		ephemeral: ephemeral,
		prepared:  spec.Prepare != nil,
		recorded:  spec.Record != nil,
		argv:      shim.RunArgv(id, opts, argv),
		env:       env,
		dir:       dir,
		timeout:   spec.Timeout,
		create:    !spec.IfRunning,
		asleep:    spec.IfRunning,
		stdin:     spec.Stdin,
		stdout:    spec.Stdout,
		started:   spec.Started,
	}, fn)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			// Cancelled before the run started: name the cause too.
			err = fmt.Errorf("%w: %w", cause, err)
		}
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// runOptions are the shim's run options for this kennel. A tracked run
// sweeps the kennel (shim.RunOptions.Sweep): nothing of an earlier run is
// alive when it starts, nothing of it when it ends. Untracked runs (git
// reads, the kennel's own commands) do not, so that they never cut short
// each other nor the tracked run; their descendants still end with them.
func (k *Kennel) runOptions(ephemeral, stdin, inbox bool) shim.RunOptions {
	return shim.RunOptions{Ephemeral: ephemeral, Sweep: !ephemeral, Grace: k.cfg.Grace, Stdin: stdin, Inbox: inbox}
}

// runSpec is a run of the shim, for Exec and Follow.
type runSpec struct {
	workspace string
	task      string // the shim task id the run is stopped by
	ephemeral bool
	argv      []string // full argv, starting with the shim
	env       []string
	dir       string
	timeout   time.Duration
	create    bool      // create the container if needed (Follow only reads)
	asleep    bool      // without create: a container not running is ErrAsleep, not ErrNoTask
	stdin     io.Reader // nil: no stdin attached
	stdout    io.Writer // nil: stdout goes to the LineHandler
	started   func()    // nil: nobody is told the process runs
	// prepared: the first stderr line may be the shim's prepared line
	// (a run with a Prepare, or the log of one).
	prepared bool
	// recorded: stderr may carry the shim's recorded line (a run with a
	// Record, or the log of one).
	recorded bool
}

// run executes a runSpec and follows it to its end.
func (k *Kennel) run(ctx context.Context, rs runSpec, fn LineHandler) (Result, error) {
	live, done, err := k.startRun(rs.workspace, rs.task)
	if err != nil {
		return Result{}, err
	}
	defer done()
	log := k.log.With(logWorkspace, rs.workspace, logTask, rs.task)

	var ctr, execID string
	var hijack types.HijackedResponse
	for attempt := 1; ; attempt++ {
		ctr, execID, err = k.createExec(ctx, rs, live)
		if err != nil {
			return Result{}, err
		}
		hijack, err = k.docker.ContainerExecAttach(ctx, execID, container.ExecAttachOptions{})
		// NotFound or Conflict: the container went away (another Fetch
		// put it to sleep or recreated it) before the exec started, so
		// nothing ran: again, in a new container.
		if err != nil && (cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err)) && attempt < createAttempts {
			log.Info("kennel: container went away before the run started; starting it again", logErr, err)
			k.forget(rs.workspace, ctr)
			continue
		}
		break
	}
	if err != nil {
		// The daemon may have started the process all the same.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitWait)
		defer cancel()
		if stopErr := k.stopIn(cleanup, ctr, rs.task); stopErr != nil {
			log.Warn("kennel: stop after a failed attach", logErr, stopErr)
		}
		return Result{}, fmt.Errorf("attach: %w", classify(err))
	}
	if rs.started != nil {
		rs.started()
	}
	// stdinFailed reports a failed read of rs.stdin; fed is closed when the
	// feeding goroutine is over. Closing the stream ends its writes, so the
	// deferred close-then-wait cannot block on them.
	stdinFailed := make(chan error, 1)
	fed := make(chan struct{})
	if rs.stdin != nil {
		go func() { // ends when rs.stdin ends or the stream is closed; waited for below
			defer close(fed)
			if err := feed(hijack, rs.stdin); err != nil {
				stdinFailed <- err
			}
		}()
	} else {
		close(fed)
	}
	defer func() {
		hijack.Close()
		<-fed
	}()

	out := newOutput(fn, k.cfg.MaxLine, k.cfg.StderrTail)
	if rs.recorded {
		out.expectRecorded(fn)
	}
	if rs.prepared {
		out.expectPrepared(fn)
	}
	copied := make(chan error, 1)
	go func() { copied <- copyOutput(out, hijack.Reader, rs.stdout) }() // ends at the stream's end or when hijack is closed; waited for below

	var expired <-chan time.Time
	if rs.timeout > 0 {
		t := time.NewTimer(rs.timeout)
		defer t.Stop()
		expired = t.C
	}
	var res Result
	var runErr, copyErr error
	select {
	case copyErr = <-copied:
	case err := <-stdinFailed:
		runErr = fmt.Errorf("read stdin: %w", err)
		log.Info("kennel: reading stdin failed; stopping the run", logErr, err)
	case <-ctx.Done():
		runErr = context.Cause(ctx)
		log.Info("kennel: run cancelled; stopping it", logErr, runErr)
	case <-expired:
		res.TimedOut = true
		runErr = ErrTimeout
		log.Info("kennel: run timed out; stopping it", logTimeout, rs.timeout)
	}
	if runErr != nil {
		live.stopped.Store(true)
		copyErr = k.stopUntilEnded(context.WithoutCancel(ctx), ctr, rs.task, copied, hijack.Close)
	}
	if copyErr != nil && runErr == nil && !rs.ephemeral {
		// The stream broke, not the run: a tracked run goes on, its log
		// and exit kept by the shim for Task and Follow.
		log.Info("kennel: stream of a run broke; the run goes on", logErr, copyErr)
		return res, fmt.Errorf("output: %w: %w", ErrStreamLost, copyErr)
	}
	if copyErr != nil && runErr == nil {
		// The stream broke, not the run: make sure nothing keeps running
		// unseen.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.cfg.Grace+exitWait)
		defer cancel()
		if stopErr := k.stopIn(cleanup, ctr, rs.task); stopErr != nil {
			log.Warn("kennel: stop after a broken stream", logErr, stopErr)
		}
		return res, fmt.Errorf("output: %w", copyErr)
	}

	inspectCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitWait)
	defer cancel()
	code, err := k.exitCode(inspectCtx, execID)
	if err != nil {
		if runErr == nil && !rs.ephemeral {
			// The stream ended but the exit cannot be read (the engine
			// went out of reach with the connection): not seen to end.
			err = fmt.Errorf("%w: %w", ErrStreamLost, err)
		}
		return res, errors.Join(runErr, err)
	}
	res.ExitCode = code
	res.StderrTail = out.tail.bytes()
	res.Stopped = live.stopped.Load()
	log.Debug("kennel: run ended", logExit, code, logStopped, res.Stopped, logTimedOut, res.TimedOut)
	return res, runErr
}

// copyOutput reads the exec's stream to its end: stdout to raw when set (and
// only stderr to the LineHandler), else both to the LineHandler. A failed
// write to raw ends the copy with that error.
func copyOutput(out *output, r io.Reader, raw io.Writer) error {
	if raw == nil {
		if err := out.copy(r); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		return nil
	}
	w := &recordingWriter{w: raw}
	_, err := stdcopy.StdCopy(w, out.errWriter(), r)
	out.flush()
	if w.err != nil {
		return fmt.Errorf("write stdout: %w", w.err)
	}
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// recordingWriter remembers the first error of w.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// recordingReader remembers the first error of r other than EOF.
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// feed copies src to the exec's stdin and closes it. A failed write (the
// process ended without reading it all, the stream was closed) is not an
// error: the run's end tells; a failed read is, and leaves stdin open (the
// run is stopped, rather than fed a truncated input and an EOF).
func feed(hijack types.HijackedResponse, src io.Reader) error {
	rr := &recordingReader{r: src}
	_, _ = io.Copy(hijack.Conn, rr)
	if rr.err != nil {
		return rr.err
	}
	_ = hijack.CloseWrite()
	return nil
}

// createExec creates the exec, in a fresh container if the one it knew of has
// died or been retired meanwhile. The run claims the container first, so that
// a change of configuration does not retire the container under it.
func (k *Kennel) createExec(ctx context.Context, rs runSpec, live *liveRun) (ctr, execID string, err error) {
	for attempt := 1; ; attempt++ {
		if rs.create {
			ctr, err = k.container(ctx, rs.workspace)
		} else {
			ctr, err = k.lookup(ctx, rs.workspace)
			switch {
			case err == nil && ctr == "" && rs.asleep:
				err = fmt.Errorf("container not running: %w", ErrAsleep)
			case err == nil && ctr == "":
				err = fmt.Errorf("task %s: container not running: %w", rs.task, ErrNoTask)
			}
		}
		if err != nil {
			return "", "", err
		}
		if !k.claim(live, rs.workspace, ctr) {
			if attempt < createAttempts {
				continue // retired or forgotten since
			}
			return "", "", fmt.Errorf("create exec: container %s: replaced %d times meanwhile", ctr, attempt)
		}
		resp, err := k.docker.ContainerExecCreate(ctx, ctr, container.ExecOptions{
			User:         k.cfg.User,
			AttachStdin:  rs.stdin != nil,
			AttachStdout: true,
			AttachStderr: true,
			Env:          rs.env,
			WorkingDir:   rs.dir,
			Cmd:          rs.argv,
		})
		if err == nil {
			return ctr, resp.ID, nil
		}
		// NotFound: the container is gone; Conflict: it is not running.
		if (cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err)) && attempt < createAttempts {
			k.forget(rs.workspace, ctr)
			continue
		}
		return "", "", fmt.Errorf("create exec: %w", classify(err))
	}
}

// stopUntilEnded stops a run and waits for its stream to end, stopping again
// if the first stop raced the wrapper's start, and closing the stream as a last
// resort. It returns the copier's error.
func (k *Kennel) stopUntilEnded(ctx context.Context, ctr, task string, copied <-chan error, closeStream func()) error {
	log := k.log.With(logTask, task)
	for range restopAttempts {
		stopCtx, cancel := context.WithTimeout(ctx, k.cfg.Grace+exitWait)
		err := k.stopIn(stopCtx, ctr, task)
		cancel()
		if err != nil {
			log.Warn("kennel: stop failed", logErr, err)
		}
		t := time.NewTimer(restopWait)
		select {
		case err := <-copied:
			t.Stop()
			return err
		case <-t.C:
		}
	}
	log.Warn("kennel: run still streaming after stop; closing its stream")
	closeStream()
	return <-copied
}

// exitCode waits for Docker to record the exec's exit: the stream can end a
// moment before the daemon has reaped the process, and the API has no call
// that waits for an exec.
func (k *Kennel) exitCode(ctx context.Context, execID string) (int, error) {
	pause := exitPollFirst
	for {
		info, err := k.docker.ContainerExecInspect(ctx, execID)
		if err != nil {
			return -1, fmt.Errorf("inspect exec: %w", classify(err))
		}
		if !info.Running {
			return info.ExitCode, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return -1, fmt.Errorf("inspect exec: still running: %w", ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// ephemeralID names an untracked run. It only needs to be unique in its
// container.
func ephemeralID() string { return "exec-" + strings.ToLower(rand.Text()) }

// checkSpec validates an ExecSpec before anything runs.
func checkSpec(spec ExecSpec) error {
	if err := checkWorkspace(spec.Workspace); err != nil {
		return err
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return fmt.Errorf("empty argv: %w", ErrInvalid)
	}
	for _, a := range spec.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("argv holds a NUL byte: %w", ErrInvalid)
		}
	}
	if spec.Dir != "" && (!path.IsAbs(spec.Dir) || path.Clean(spec.Dir) != spec.Dir) {
		return fmt.Errorf("dir %q: want an absolute, clean path: %w", spec.Dir, ErrInvalid)
	}
	if spec.TaskID != "" {
		if err := checkTaskID(spec.TaskID); err != nil {
			return err
		}
	}
	if spec.Prepare != nil && (spec.TaskID == "" || spec.Stdout != nil) {
		return fmt.Errorf("a run with Prepare needs a TaskID and no raw Stdout: %w", ErrInvalid)
	}
	if spec.Egress != nil && spec.TaskID == "" {
		return fmt.Errorf("a run with Egress needs a TaskID: %w", ErrInvalid)
	}
	if spec.Record != nil && spec.TaskID == "" {
		return fmt.Errorf("a run with Record needs a TaskID: %w", ErrInvalid)
	}
	if err := checkInbox(spec); err != nil {
		return err
	}
	if spec.Timeout < 0 {
		return fmt.Errorf("negative timeout: %w", ErrInvalid)
	}
	for _, kv := range spec.Env {
		key, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || key == "" || strings.ContainsAny(key, "\x00 ") || strings.IndexByte(kv, 0) >= 0:
			return fmt.Errorf("env entry %q: want KEY=VALUE: %w", key, ErrInvalid)
		case strings.HasPrefix(key, ReservedEnvPrefix):
			return fmt.Errorf("env %s: the %s prefix is Fetch's own: %w", key, ReservedEnvPrefix, ErrInvalid)
		}
	}
	return nil
}

func checkTaskID(id string) error {
	if !shim.ValidTaskID(id) {
		return fmt.Errorf("task id %q: want 1-128 of [A-Za-z0-9._-], starting with a letter or digit: %w", id, ErrInvalid)
	}
	return nil
}
