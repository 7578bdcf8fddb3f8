package harness_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// localRunner is a harness.Runner that runs commands on the host, the fake
// CLIs found in bin first. It covers Run and the fake CLIs without Docker;
// kennel_test.go runs the same scenarios in a real kennel. Like the kennel it
// runs each command in its own process group and on timeout sends SIGINT,
// then SIGKILL.
type localRunner struct {
	bin  string // directory of fake CLIs
	home string // HOME of the commands
}

const (
	localGrace    = 2 * time.Second
	localTailSize = 8 << 10
)

var (
	localShimOnce sync.Once
	localShimDir  string
	localShimErr  error
)

// localShim is the kennel's fetch-shim (testkit.BuildShim), built once per
// test process, which the local runner runs where a kennel runs its own
// (the shim's batch, for the snapshots of a run's work tree).
func localShim() (string, error) {
	localShimOnce.Do(func() {
		localShimDir, localShimErr = os.MkdirTemp("", "fetch-harness-shim-")
		if localShimErr == nil {
			localShimErr = testkit.BuildShim(filepath.Join(localShimDir, "fetch-shim"))
		}
	})
	return filepath.Join(localShimDir, "fetch-shim"), localShimErr
}

func removeLocalShim() {
	if localShimDir != "" {
		os.RemoveAll(localShimDir)
	}
}

func (r localRunner) Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	path := filepath.Join(r.bin, spec.Argv[0])
	if spec.Argv[0] == shim.Path {
		var err error
		if path, err = localShim(); err != nil {
			return kennel.Result{}, err
		}
	}
	if _, err := os.Stat(path); err != nil {
		if path, err = exec.LookPath(spec.Argv[0]); err != nil {
			return kennel.Result{}, err
		}
	}
	cmd := exec.Command(path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = spec.Workspace
	}
	cmd.Env = append([]string{"PATH=" + r.bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + r.home}, spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A two-way run's stdin (spec.Stdin) may stay open after the process
	// exits: WaitDelay keeps Wait from waiting for it.
	cmd.Stdin, cmd.WaitDelay = spec.Stdin, localGrace
	// Raw stdout goes to spec.Stdout when it is set (a batch's JSON), as
	// in the kennel; lines go to fn otherwise.
	var (
		stdout io.Reader
		err    error
	)
	if spec.Stdout != nil {
		cmd.Stdout = spec.Stdout
	} else if stdout, err = cmd.StdoutPipe(); err != nil {
		return kennel.Result{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return kennel.Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return kennel.Result{}, err
	}
	if spec.Started != nil {
		spec.Started()
	}

	var (
		mu   sync.Mutex // serialises fn, as the kennel does
		tail []byte
		wg   sync.WaitGroup
	)
	read := func(s kennel.Stream, rd io.Reader) {
		defer wg.Done()
		sc := bufio.NewScanner(rd)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			mu.Lock()
			if s == kennel.Stderr {
				tail = append(tail, sc.Bytes()...)
				tail = append(tail, '\n')
				if len(tail) > localTailSize {
					tail = tail[len(tail)-localTailSize:]
				}
			}
			if fn != nil {
				fn(s, sc.Bytes())
			}
			mu.Unlock()
		}
	}
	wg.Add(1)
	go read(kennel.Stderr, stderr)
	if stdout != nil {
		wg.Add(1)
		go read(kennel.Stdout, stdout)
	}

	done := make(chan struct{})
	var timedOut, stopped bool
	var timeout <-chan time.Time
	if spec.Timeout > 0 {
		tm := time.NewTimer(spec.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-timeout:
		timedOut, stopped = true, true
	case <-ctx.Done():
		stopped = true
	}
	if stopped {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(localGrace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	err = cmd.Wait()
	res := kennel.Result{ExitCode: cmd.ProcessState.ExitCode(), StderrTail: tail, Stopped: stopped, TimedOut: timedOut}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, err
	}
	if res.ExitCode == -1 { // killed by a signal
		res.ExitCode = 128 + int(cmd.ProcessState.Sys().(syscall.WaitStatus).Signal())
	}
	switch {
	case timedOut:
		return res, kennel.ErrTimeout
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	return res, nil
}
