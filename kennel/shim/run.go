package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Exit codes of run when the child could not be run, as a shell reports them.
const (
	ExitShimFailed    = 125 // the shim itself failed (bad arguments, state dir, busy task)
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// drainTimeout bounds how long the runner keeps copying output after the task's
// processes are gone: a process that left the task without its tag may still
// hold the pipes.
const drainTimeout = 2 * time.Second

// forwarded are the signals run passes on to the child's process group.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

type runOptions struct {
	dir       string
	id        string
	ephemeral bool
	stdin     bool // the child reads our stdin rather than /dev/null
	inbox     bool // the child reads the task's inbox (send writes to it)
	grace     time.Duration
	argv      []string
	// record, when set, runs after the child (see RecordedPrefix).
	record *Batch
	// sweep: clear the kennel before the child starts and after it ended
	// (clearKennel), for a tracked run.
	sweep bool
}

// runTask is the run command. It returns the exit code for the shim to exit
// with; messages about the shim's own failures go to stderr.
func runTask(ctx context.Context, o runOptions, stdout, stderr io.Writer) int {
	t := task{dir: o.dir, id: o.id}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "fetch-shim: "+format+"\n", args...)
		return ExitShimFailed
	}
	// A subreaper, so that what double-forks out of the child comes back
	// to the runner, which ends it with the rest of the run.
	if err := becomeSubreaper(); err != nil {
		return fail("subreaper: %v", err)
	}
	if o.sweep {
		// Nothing of an earlier run may see this one: clear the kennel
		// first, then the state directory, before anything is written.
		if err := checkInit("/proc"); err != nil {
			return fail("run --sweep: %v", err)
		}
		if err := clearKennel(ctx, "/proc"); err != nil {
			return fail("task %s: clear the kennel: %v", o.id, err)
		}
		if err := t.repairDir(); err != nil {
			return fail("task %s: %v", o.id, err)
		}
	} else if err := t.ensureDir(); err != nil {
		return fail("%v", err)
	}
	lock, err := t.lock()
	if err != nil {
		return fail("task %s: %v", o.id, err)
	}
	defer lock.Close() // for the early returns; closed explicitly below
	if err := t.remove(pidSuffix, logSuffix, exitSuffix, stopSuffix); err != nil {
		return fail("task %s: clear old files: %v", o.id, err)
	}
	var lw *logWriter
	if !o.ephemeral {
		f, err := os.OpenFile(t.path(logSuffix), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return fail("task %s: log: %v", o.id, err)
		}
		lw = &logWriter{f: f}
	}
	var in *inbox
	if o.inbox {
		if in, err = openInbox(t); err != nil {
			if lw != nil {
				lw.f.Close()
			}
			return fail("task %s: %v", o.id, err)
		}
	}
	first := &firstLine{}
	code, exitErr := runChild(ctx, t, o, lw, in, first, stdout, stderr)
	if o.sweep {
		// The run's processes are gone; undo what they did to the state
		// directory before the records are written there.
		if err := t.repairDir(); err != nil {
			fmt.Fprintf(stderr, "fetch-shim: task %s: %v\n", o.id, err)
		}
	}
	if o.record != nil && exitErr == nil {
		if err := record(ctx, o.record, first, lw, stderr); err != nil {
			fmt.Fprintf(stderr, "fetch-shim: task %s: %v\n", o.id, err)
		}
	}
	rec := ExitRecord{Code: code, Stopped: t.stopRequested(), Ended: time.Now()}
	if exitErr != nil {
		rec.Error = exitErr.Error()
		fmt.Fprintf(stderr, "fetch-shim: %v\n", exitErr)
	}
	if o.ephemeral {
		if err := t.remove(pidSuffix, exitSuffix, stopSuffix, lockSuffix); err != nil {
			fmt.Fprintf(stderr, "fetch-shim: task %s: remove files: %v\n", o.id, err)
		}
	} else if err := t.writeExit(rec); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: task %s: record exit: %v\n", o.id, err)
	}
	// After the exit record, so that a send that finds no inbox while the
	// lock is still held can tell an ended task from a closed input.
	if in != nil {
		if err := in.close(); err != nil {
			fmt.Fprintf(stderr, "fetch-shim: task %s: remove inbox: %v\n", o.id, err)
		}
	}
	// Order matters for followers: exit recorded, then unlock, then the log's
	// close (its IN_CLOSE_WRITE tells a follower the run is over).
	lock.Close()
	if lw != nil {
		lw.f.Close()
	}
	return code
}

// runChild starts the child, relays signals and output, and cleans up after it.
// The child's first stderr line goes to first too. The error is set only
// when the child could not be started.
func runChild(ctx context.Context, t task, o runOptions, lw *logWriter, in *inbox, first io.Writer, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(o.argv[0], o.argv[1:]...)
	cmd.Env = append(withoutEnv(os.Environ(), TagEnv), TagEnv+"="+o.id)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	switch {
	case in != nil:
		cmd.Stdin = in.childIn // the FIFO's read end, as fd 0
	case o.stdin:
		cmd.Stdin = os.Stdin // an *os.File: passed as fd 0, no copying goroutine
	} // otherwise cmd.Stdin stays nil: the child reads /dev/null.
	outR, outW, err := os.Pipe()
	if err != nil {
		return ExitShimFailed, fmt.Errorf("pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return ExitShimFailed, fmt.Errorf("pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	// Relay before starting, so that no signal is lost in between. Go resets
	// caught signals to their defaults in the child. SIGPIPE is caught too so
	// that a vanished reader of our stdout does not kill the runner.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	signal.Notify(sigs, syscall.SIGPIPE, syscall.SIGCHLD)
	defer signal.Stop(sigs)

	startErr := cmd.Start()
	outW.Close()
	errW.Close()
	if in != nil {
		in.childIn.Close() // the child has it; the runner keeps no read end
	}
	if startErr != nil {
		outR.Close()
		errR.Close()
		return startCode(startErr), fmt.Errorf("start %q: %w", o.argv[0], startErr)
	}
	pgid := cmd.Process.Pid
	if err := t.writePid(PidRecord{PGID: pgid, Runner: os.Getpid(), Ephemeral: o.ephemeral, Records: o.record != nil, Started: time.Now()}); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: task %s: record pid: %v\n", o.id, err)
	}

	var copiers sync.WaitGroup
	copiers.Go(func() { copyOutput(outR, Stdout, lw, stdout, io.Discard) })
	copiers.Go(func() { copyOutput(errR, Stderr, lw, stderr, first) })

	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }() // ends when the child does; waited for below
relay:
	for {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGPIPE:
				continue
			case syscall.SIGCHLD:
				reapOrphans("/proc", pgid) // the child is Wait's
				continue
			}
			kill(-pgid, sig.(syscall.Signal))
		case <-waited:
			break relay
		}
	}
	code := exitCode(cmd.ProcessState)

	// The leader is gone; whatever is left of the task goes too: its group,
	// its tag, every descendant of the runner (a subreaper: what
	// double-forked came back to it) and, for a tracked run, every stray.
	tg := target{pgid: pgid, tag: o.id, runner: os.Getpid(), descendants: true, strays: o.sweep, exclude: []int{os.Getpid()}}
	if err := sweep(ctx, "/proc", tg, escalation(o.grace)); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: task %s: clean up: %v\n", o.id, err)
	}
	reapAll() // the child was waited for; the rest were reparented here
	drained := make(chan struct{})
	go func() { copiers.Wait(); close(drained) }()
	timer := time.NewTimer(drainTimeout)
	defer timer.Stop()
	select {
	case <-drained:
	case <-timer.C:
		// Something outside the task holds the pipes; closing our ends
		// ends the copiers' reads.
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	return code, nil
}

// copyOutput copies one of the child's streams to the log, to w and to tee
// until EOF. A failing w (the exec's reader went away) does not stop the
// log or tee; tee must not fail.
func copyOutput(r io.Reader, s Stream, lw *logWriter, w, tee io.Writer) {
	buf := make([]byte, copyBuffer)
	wOK := true
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if lw != nil {
				_ = lw.writeFrame(s, buf[:n]) // a full /tmp must not stop the live stream
			}
			_, _ = tee.Write(buf[:n])
			if wOK {
				if _, werr := w.Write(buf[:n]); werr != nil {
					wOK = false
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return ExitShimFailed
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func startCode(err error) int {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return ExitNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return ExitNotExecutable
	default:
		return ExitShimFailed
	}
}

// withoutEnv drops key from env (a shim run inside a task gets its own tag).
func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
