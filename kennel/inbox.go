package kennel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// MaxMessage bounds one message of Send.
const MaxMessage = shim.MaxMessage

// SendTimeout bounds one Send inside the kennel when ctx has no earlier
// deadline: the time for the task to take the message (another message may
// hold the inbox, the program may be slow to read).
const SendTimeout = shim.DefaultSendTimeout

// sendMargin is the time left for the shim's answer to come back when a
// Send's ctx has a deadline (half of what is left, if that is less): an
// exec's start and end on a busy engine take well over half a second.
const sendMargin = 2 * time.Second

// Send writes msg to the stdin of a task started with ExecSpec.Inbox, as one
// message: whole, never interleaved with another Send's, in the order the
// Sends are made. It works from any Kennel on the task's engine, also after a
// restart while the run goes on (Follow reads its output back). msg reaches
// the program through the exec's stdin, never its argv.
//
// Errors: ErrInvalid for an empty message or one over MaxMessage (nothing is
// run); ErrNoTask when the task is not running (never ran, ended, stopped,
// container gone); ErrInputClosed when it runs but takes no input;
// ErrInputStalled when it did not take the message within SendTimeout (or
// ctx's deadline, if earlier). Stop ends a Send that waits with ErrNoTask.
func (k *Kennel) Send(ctx context.Context, workspace, taskID string, msg []byte) error {
	if len(msg) == 0 {
		return fmt.Errorf("kennel: send %s: empty message: %w", taskID, ErrInvalid)
	}
	if len(msg) > MaxMessage {
		return fmt.Errorf("kennel: send %s: message of %d bytes exceeds %d: %w", taskID, len(msg), MaxMessage, ErrInvalid)
	}
	return k.send(ctx, workspace, taskID, msg, false)
}

// CloseInput ends the stdin of a task started with ExecSpec.Inbox: its
// program reads what was sent, then EOF; later Sends fail with
// ErrInputClosed. Closing a closed input, or that of a task that is not
// running, is success.
func (k *Kennel) CloseInput(ctx context.Context, workspace, taskID string) error {
	return k.send(ctx, workspace, taskID, nil, true)
}

// send runs the shim's send.
func (k *Kennel) send(ctx context.Context, workspace, taskID string, msg []byte, closeInput bool) error {
	op := "kennel: send " + taskID
	if closeInput {
		op = "kennel: close input of " + taskID
	}
	if err := checkWorkspace(workspace); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := checkTaskID(taskID); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	timeout := SendTimeout
	if dl, ok := ctx.Deadline(); ok {
		// The shim gives up a little before ctx does, so that its
		// verdict (ErrInputStalled) comes back rather than ctx's error.
		left := time.Until(dl)
		if left <= 0 {
			return fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
		}
		timeout = min(timeout, left-min(left/2, sendMargin))
	}
	ctr, err := k.lookup(ctx, workspace)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if ctr == "" {
		if closeInput {
			return nil
		}
		return fmt.Errorf("%s: container not running: %w", op, ErrNoTask)
	}
	res, err := k.controlIn(ctx, ctr, shim.SendArgv(taskID, closeInput, timeout), msg, shim.ExitOK)
	if errors.Is(err, errContainerGone) {
		k.forget(workspace, ctr)
		if closeInput {
			return nil
		}
		return fmt.Errorf("%s: container gone: %w", op, ErrNoTask)
	}
	if err != nil && errors.Is(err, ErrShim) {
		if sentinel := sendError(res.code); sentinel != nil {
			err = fmt.Errorf("%s: %w", trimMessage(res.stderr), sentinel)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// sendError is the sentinel for an exit code of the shim's send.
func sendError(code int) error {
	switch code {
	case shim.ExitNoTask:
		return ErrNoTask
	case shim.ExitNoInput:
		return ErrInputClosed
	case shim.ExitTooLarge:
		return ErrInvalid
	case shim.ExitStalled, shim.ExitPartial:
		return ErrInputStalled
	}
	return nil
}

// checkInbox validates ExecSpec.Inbox.
func checkInbox(spec ExecSpec) error {
	if !spec.Inbox {
		return nil
	}
	if spec.TaskID == "" {
		return fmt.Errorf("inbox without a task id (Send names the task): %w", ErrInvalid)
	}
	if spec.Stdin != nil {
		return fmt.Errorf("inbox and stdin together: the run has one stdin: %w", ErrInvalid)
	}
	return nil
}
