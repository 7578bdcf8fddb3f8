package shim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ScanInterval is how often stop re-reads /proc while it waits for processes to
// go: there is no notification for the death of a process one did not start.
const ScanInterval = 10 * time.Millisecond

// DefaultGrace is the time from SIGINT to SIGKILL when no --grace is given.
const DefaultGrace = 2 * time.Second

// killWait bounds the wait after SIGKILL (a process in uninterruptible sleep
// dies when its I/O completes) and the wait for a runner to record the exit.
const killWait = 5 * time.Second

// phase is one step of the escalation: send sig, then wait until the offset
// end (from the start of the sweep) for everything to be gone.
type phase struct {
	sig syscall.Signal
	end time.Duration
}

// escalation is SIGINT, SIGTERM at half the grace, SIGKILL at the full grace.
// SIGINT comes first because it is the signal that cleanly aborts the coding
// CLIs (SIGTERM does not stop Claude Code, HARNESSES.md §1.4).
func escalation(grace time.Duration) []phase {
	return []phase{
		{syscall.SIGINT, grace / 2},
		{syscall.SIGTERM, grace},
		{syscall.SIGKILL, grace + killWait},
	}
}

// sweep signals the processes of t with the phases (escalation, killOnly)
// until none is left.
// Process-group members get the group signal once per phase (a second SIGINT
// makes some CLIs abort hard); tagged processes outside the group are signalled
// one by one, including ones that appear during the phase. SIGKILL is repeated
// on every tick so that nothing forked in between survives.
func sweep(ctx context.Context, procRoot string, t target, phases []phase) error {
	start := time.Now()
	tick := time.NewTicker(ScanInterval)
	defer tick.Stop()
	var left []proc
	for _, ph := range phases {
		deadline := time.NewTimer(time.Until(start.Add(ph.end)))
		signalled := make(map[int]bool)
		groupSignalled := false
	wait:
		for {
			procs, err := scanProcs(procRoot)
			if err != nil {
				deadline.Stop()
				return err
			}
			left = members(procs, t)
			if len(left) == 0 {
				deadline.Stop()
				return nil
			}
			if t.pgid > 0 && (!groupSignalled || ph.sig == syscall.SIGKILL) {
				kill(-t.pgid, ph.sig)
				groupSignalled = true
			}
			for _, p := range left {
				if p.pgid == t.pgid && t.pgid > 0 {
					continue
				}
				if !signalled[p.pid] || ph.sig == syscall.SIGKILL {
					kill(p.pid, ph.sig)
					signalled[p.pid] = true
				}
			}
			select {
			case <-ctx.Done():
				deadline.Stop()
				return ctx.Err()
			case <-deadline.C:
				break wait
			case <-tick.C:
			}
		}
	}
	return fmt.Errorf("still running after SIGKILL: pids %v", pidsOf(left))
}

// kill sends sig, ignoring processes that are already gone.
func kill(pid int, sig syscall.Signal) {
	_ = syscall.Kill(pid, sig) // ESRCH: gone already; EPERM: not ours, nothing to do
}

// stopTask is the stop command: mark the task stopped, sweep its processes,
// wait for the runner to record the exit. A task that does not exist or has
// ended is stopped already.
func stopTask(ctx context.Context, dir, id string, grace time.Duration) error {
	t := task{dir: dir, id: id}
	if err := t.ensureDir(); err != nil {
		return err
	}
	if err := t.requestStop(); err != nil {
		return err
	}
	pid, hasPid, err := t.waitPid(ctx, grace+killWait)
	if err != nil {
		return err
	}
	_, hasExit, err := t.readExit()
	if err != nil {
		return err
	}
	tg := target{pgid: groupOf(pid, hasPid, hasExit), tag: id, exclude: []int{os.Getpid()}}
	if running, err := t.running(); err == nil && running && hasPid {
		tg.runner = pid.Runner // alive, so its pid is its own
	}
	if err := sweep(ctx, "/proc", tg, escalation(grace)); err != nil {
		return err
	}
	runnerWait := killWait
	if pid.Records {
		runnerWait += recordTimeout // it records after its child
	}
	if err := t.waitRunner(ctx, runnerWait); err != nil {
		return err
	}
	if hasPid {
		// The runner released its lock on its way out; wait until it is
		// out, so that no trace of the task is left when stop returns.
		if err := waitGone(ctx, "/proc", pid.Runner, killWait); err != nil {
			return err
		}
	}
	if _, hasExit, err = t.readExit(); err != nil {
		return err
	}
	if hasPid && !hasExit && !pid.Ephemeral {
		// The runner died without recording the exit (it was killed): record
		// that the task is over so that followers and status agree.
		return t.writeExit(ExitRecord{Code: -1, Lost: true, Stopped: true, Ended: time.Now()})
	}
	return nil
}

// waitPid returns the pid record, waiting while a runner holds the lock but has
// not written it yet (it is starting its child).
func (t task) waitPid(ctx context.Context, limit time.Duration) (PidRecord, bool, error) {
	return pollUntil(ctx, limit, func() (PidRecord, bool, bool, error) {
		pid, ok, err := t.readPid()
		if err != nil || ok {
			return pid, ok, true, err
		}
		running, err := t.running()
		return pid, false, !running, err
	})
}

// waitRunner waits for the runner to release its lock.
func (t task) waitRunner(ctx context.Context, limit time.Duration) error {
	_, _, err := pollUntil(ctx, limit, func() (struct{}, bool, bool, error) {
		running, err := t.running()
		return struct{}{}, false, !running, err
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("runner of %s did not exit", t.id)
	}
	return err
}

// waitGone waits until pid has exited (a zombie counts as exited).
func waitGone(ctx context.Context, procRoot string, pid int, limit time.Duration) error {
	_, _, err := pollUntil(ctx, limit, func() (struct{}, bool, bool, error) {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procRoot, pid))
		if err != nil {
			return struct{}{}, false, true, nil // gone
		}
		p, err := parseStat(b)
		return struct{}{}, false, err != nil || p.state == 'Z' || p.state == 'X', nil
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("runner %d did not exit", pid)
	}
	return err
}

var errPollTimeout = errors.New("timed out")

// pollUntil calls check on every ScanInterval tick until it reports done, for
// at most limit.
func pollUntil[T any](ctx context.Context, limit time.Duration, check func() (T, bool, bool, error)) (T, bool, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(ScanInterval)
	defer tick.Stop()
	for {
		v, ok, done, err := check()
		if err != nil || done {
			return v, ok, err
		}
		select {
		case <-ctx.Done():
			return v, false, ctx.Err()
		case <-deadline.C:
			return v, false, errPollTimeout
		case <-tick.C:
		}
	}
}
