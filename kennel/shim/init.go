package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// CmdInit is the command the kennel image runs as the container's PID 1.
const CmdInit = "init"

// InitArgv is the kennel container's entrypoint (Dockerfile.kennel).
func InitArgv() []string { return []string{Path, CmdInit} }

// Linux prctl options the standard library's syscall package does not name.
const (
	prSetDumpable       = 4  // PR_SET_DUMPABLE
	prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER
)

func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// undumpable makes this process undumpable: its /proc/PID files (environ,
// fd, mem) then belong to root and it cannot be ptraced, so that processes of
// the same user (a task's) can neither read its environment nor take it
// over. Children are dumpable again once they exec a program.
func undumpable() error { return prctl(prSetDumpable, 0) }

// becomeSubreaper makes this process the child subreaper of its
// descendants: a process that double-forks out of its parent is reparented
// to it rather than to init.
func becomeSubreaper() error { return prctl(prSetChildSubreaper, 1) }

// runInit is the init command: the kennel container's PID 1. It starts
// nothing: Fetch's processes come through docker exec. It reaps whatever is
// reparented to it, and exits on SIGTERM or SIGINT (docker stop); the other
// signals a process of the kennel may send it are ignored. Run as any other
// pid (by hand, in tests) it makes itself a subreaper so that it reaps all
// the same.
func runInit(ctx context.Context, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "fetch-shim: init: %v\n", err)
		return ExitFailed
	}
	if os.Getpid() != initPID {
		if err := becomeSubreaper(); err != nil {
			return fail(err)
		}
	}
	// Notify before Ignore: once SIGUSR2 (the last ignored) shows in
	// /proc/PID/status's SigIgn, SIGTERM is already handled (the tests
	// wait on that, not on time).
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	signal.Ignore(syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGPIPE, syscall.SIGUSR2)
	for {
		reapAll()
		select {
		case <-ctx.Done():
			return ExitOK
		case sig := <-sigs:
			if sig != syscall.SIGCHLD {
				return ExitOK
			}
		}
	}
}

// reapAll collects every child of this process that has ended. Only for a
// process that waits for no particular child meanwhile (init, a runner whose
// child was waited for).
func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
