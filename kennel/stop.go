package kennel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// controlOutputMax bounds what the kennel reads from the shim's control
// commands (status, ps, stop): their output is a few JSON lines.
const controlOutputMax = 4 << 20

// Stop stops a task: SIGINT to its process group and to every process tagged
// with its id, SIGTERM after half of Config.Grace, SIGKILL after all of it. It
// returns when they are all gone. Stopping a task that has ended, that never
// ran, or whose container is gone is success. A run of this Kennel that is
// stopped returns with Result.Stopped set.
func (k *Kennel) Stop(ctx context.Context, workspace, taskID string) error {
	if err := checkWorkspace(workspace); err != nil {
		return fmt.Errorf("kennel: stop: %w", err)
	}
	if err := checkTaskID(taskID); err != nil {
		return fmt.Errorf("kennel: stop: %w", err)
	}
	ctr, err := k.lookup(ctx, workspace)
	if err != nil {
		return fmt.Errorf("kennel: stop %s: %w", taskID, err)
	}
	if ctr == "" {
		return nil // no container, no process
	}
	k.markStopped(workspace, taskID)
	err = k.stopIn(ctx, ctr, taskID)
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		return nil // it took its processes with it
	}
	if err != nil {
		return fmt.Errorf("kennel: stop %s: %w", taskID, err)
	}
	k.log.Info("kennel: task stopped", logWorkspace, workspace, logTask, taskID)
	return nil
}

// stopIn runs the shim's stop for a task in a container.
func (k *Kennel) stopIn(ctx context.Context, ctr, taskID string) error {
	_, err := k.control(ctx, ctr, shim.StopArgv(taskID, k.cfg.Grace), shim.ExitOK)
	return err
}

// control runs one of the shim's control commands directly (not under a run:
// they end by themselves) and returns its stdout. An exit code outside ok is
// an ErrShim error carrying the command's stderr.
func (k *Kennel) control(ctx context.Context, ctr string, argv []string, ok ...int) (controlResult, error) {
	return k.controlIn(ctx, ctr, argv, nil, ok...)
}

// controlIn is control with stdin: nil leaves the command's stdin empty.
func (k *Kennel) controlIn(ctx context.Context, ctr string, argv []string, stdin []byte, ok ...int) (controlResult, error) {
	resp, err := k.docker.ContainerExecCreate(ctx, ctr, container.ExecOptions{
		User:         k.cfg.User,
		AttachStdin:  stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Cmd:          argv,
	})
	if cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		return controlResult{}, fmt.Errorf("%s: %w: %w", argv[1], errContainerGone, err)
	}
	if err != nil {
		return controlResult{}, fmt.Errorf("%s: create exec: %w", argv[1], classify(err))
	}
	hijack, err := k.docker.ContainerExecAttach(ctx, resp.ID, container.ExecAttachOptions{})
	if err != nil {
		return controlResult{}, fmt.Errorf("%s: attach: %w", argv[1], classify(err))
	}
	defer hijack.Close()
	if stdin != nil {
		fed := make(chan struct{})
		go func() { // ends when stdin is written or the stream is closed; waited for below
			defer close(fed)
			if _, err := hijack.Conn.Write(stdin); err == nil {
				_ = hijack.CloseWrite()
			} // a failed write: the command ends on its own (its stdin is short), and says so
		}()
		defer func() { hijack.Close(); <-fed }()
	}
	var res controlResult
	stdout := &limitedBuffer{max: controlOutputMax}
	stderr := &ring{max: k.cfg.StderrTail}
	copied := make(chan error, 1)
	go func() { // ends with the stream or when hijack is closed; waited for below
		_, err := stdcopy.StdCopy(stdout, stderr, hijack.Reader)
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		hijack.Close()
		<-copied
		return res, fmt.Errorf("%s: %w", argv[1], context.Cause(ctx))
	}
	if err != nil {
		return res, fmt.Errorf("%s: read output: %w", argv[1], err)
	}
	code, err := k.exitCode(ctx, resp.ID)
	if err != nil {
		return res, fmt.Errorf("%s: %w", argv[1], err)
	}
	res = controlResult{code: code, stdout: stdout.buf, stderr: stderr.bytes()}
	for _, c := range ok {
		if code == c {
			return res, nil
		}
	}
	return res, fmt.Errorf("%s: exit %d: %s: %w", argv[1], code, trimMessage(res.stderr), ErrShim)
}

// controlResult is what a control command printed and its exit code.
type controlResult struct {
	code   int
	stdout []byte
	stderr []byte
}

// limitedBuffer collects up to max bytes and fails beyond.
type limitedBuffer struct {
	max int
	buf []byte
}

var errTooMuchOutput = errors.New("output too large")

// errContainerGone: the container died or was removed since it was last seen.
var errContainerGone = errors.New("container gone")

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > b.max {
		return 0, errTooMuchOutput
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// trimMessage makes a command's stderr fit in an error message.
func trimMessage(b []byte) string {
	const max = 512
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
