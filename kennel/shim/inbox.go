package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The inbox: a run started with --inbox reads its stdin from a FIFO in the
// state directory, which send writes to from any later exec. The runner is the
// FIFO's permanent writer (so the child never sees EOF between messages, nor
// when a sender dies), and holds no read end (so a child that stopped reading
// its stdin or died makes a send fail, not hang on a buffer nobody drains).
// send --close removes the FIFO and tells the runner, through a second FIFO it
// reads, to close its write end: the child then reads what is queued, then
// EOF, and later sends find no inbox.

// MaxMessage bounds one message sent to a task's stdin.
const MaxMessage = 1 << 20

// DefaultSendTimeout bounds a send when no --timeout is given: the time to get
// the inbox (another send may hold it) and room for the whole message.
const DefaultSendTimeout = 10 * time.Second

// sendTick is how often a send waiting for the inbox lock or for room in the
// pipe looks again: the kernel tells neither when a flock is free without
// blocking unboundedly, nor when a pipe has N bytes free. The fast path (no
// other sender, a child that reads) does not wait.
const sendTick = 5 * time.Millisecond

// ctlClose is the byte send --close writes to the runner's control FIFO.
const ctlClose = 'c'

// Errors of send, mapped to exit codes by Main.
var (
	errNoTask   = errors.New("task is not running")
	errNoInput  = errors.New("task takes no input: it was not started with --inbox, its input was closed, or it no longer reads it")
	errTooLarge = fmt.Errorf("message larger than %d bytes", MaxMessage)
	errEmpty    = errors.New("empty message: give the message on stdin, or --close")
	errStalled  = errors.New("task did not take the message in time: it is not reading its input")
	errPartial  = errors.New("task stopped reading in the middle of the message; its input now ends with a partial message")
)

// inbox is the runner's side: the write end it keeps open and the control FIFO
// it reads.
type inbox struct {
	t       task
	childIn *os.File // the read end, for the child's stdin; closed by the runner once the child has it
	ctl     *os.File // read by serve; closing it ends serve

	mu sync.Mutex
	w  int // the write end, -1 once closed

	served chan struct{}
}

// openInbox makes the task's FIFOs and opens them. The caller must hold the
// task's lock (old FIFOs are replaced).
func openInbox(t task) (*inbox, error) {
	if err := t.remove(inSuffix, ctlSuffix); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	for _, s := range []string{inSuffix, ctlSuffix} {
		if err := syscall.Mkfifo(t.path(s), 0o600); err != nil {
			return nil, fmt.Errorf("inbox: mkfifo: %w", err)
		}
	}
	// The read end first, non-blocking (there is no writer yet), then the
	// write end (which does not block: there is a reader now); then the read
	// end is made blocking again for the child.
	r, err := syscall.Open(t.path(inSuffix), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("inbox: open: %w", err)
	}
	w, err := syscall.Open(t.path(inSuffix), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		syscall.Close(r)
		return nil, fmt.Errorf("inbox: open: %w", err)
	}
	if err := syscall.SetNonblock(r, false); err != nil {
		syscall.Close(r)
		syscall.Close(w)
		return nil, fmt.Errorf("inbox: %w", err)
	}
	// Room for a whole message, so that a send is written at once or not at
	// all. Best effort: the kernel may cap it (fs.pipe-max-size), and send
	// copes with a smaller pipe.
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(w), syscall.F_SETPIPE_SZ, MaxMessage)
	// O_RDWR: the runner is a writer too, so reads never see EOF; Go polls
	// the FIFO, so Close ends a pending Read.
	ctl, err := os.OpenFile(t.path(ctlSuffix), os.O_RDWR, 0)
	if err != nil {
		syscall.Close(r)
		syscall.Close(w)
		return nil, fmt.Errorf("inbox: control: %w", err)
	}
	in := &inbox{t: t, childIn: os.NewFile(uintptr(r), t.path(inSuffix)), ctl: ctl, w: w, served: make(chan struct{})}
	go in.serve() // ends when close closes ctl; waited for there
	return in, nil
}

// serve reads the control FIFO until it is closed.
func (in *inbox) serve() {
	defer close(in.served)
	var b [64]byte
	for {
		n, err := in.ctl.Read(b[:])
		for _, c := range b[:n] {
			if c == ctlClose {
				in.closeInput()
			}
		}
		if err != nil {
			return
		}
	}
}

// closeInput closes the runner's write end: once the senders are gone too,
// the child reads EOF.
func (in *inbox) closeInput() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.w >= 0 {
		syscall.Close(in.w)
		in.w = -1
	}
}

// close ends serve, closes every descriptor and removes the FIFOs.
func (in *inbox) close() error {
	in.ctl.Close()
	<-in.served
	in.closeInput()
	in.childIn.Close() // already closed after the child's start; harmless
	return in.t.remove(inSuffix, ctlSuffix)
}

// sendOptions are the options of send.
type sendOptions struct {
	dir     string
	id      string
	close   bool // close the task's input after the message, if any
	timeout time.Duration
}

// sendMessage is the send command: it reads one message (up to MaxMessage
// bytes) from r and writes it, whole, to the task's inbox, then closes the
// input when asked. Concurrent sends are serialised by a flock on the FIFO, so
// their messages never interleave.
func sendMessage(ctx context.Context, o sendOptions, r io.Reader) error {
	t := task{dir: o.dir, id: o.id}
	msg, err := io.ReadAll(io.LimitReader(r, MaxMessage+1))
	if err != nil {
		return fmt.Errorf("read message: %w", err)
	}
	if len(msg) > MaxMessage {
		return errTooLarge
	}
	if len(msg) == 0 && !o.close {
		return errEmpty
	}
	deadline := time.Now().Add(o.timeout)

	fd, err := syscall.Open(t.path(inSuffix), syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("inbox: %w", err)
		}
		// No FIFO, or no reader on it.
		if o.close && len(msg) == 0 {
			return nil // nothing left to close
		}
		if ended, err := t.ended(); err != nil || ended {
			return errors.Join(errNoTask, err)
		}
		return errNoInput
	}
	defer syscall.Close(fd)

	tick := time.NewTicker(sendTick)
	defer tick.Stop()
	wait := func() error {
		if ended, err := t.ended(); err != nil || ended {
			return errors.Join(errNoTask, err)
		}
		if time.Now().After(deadline) {
			return errStalled
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			return nil
		}
	}
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("inbox lock: %w", err)
		}
		if err := wait(); err != nil {
			return err
		}
	}
	// The lock is ours: a close that came in between removed the FIFO.
	if _, err := os.Stat(t.path(inSuffix)); errors.Is(err, fs.ErrNotExist) {
		if o.close && len(msg) == 0 {
			return nil
		}
		return errNoInput
	}
	if err := writeWhole(fd, msg, wait); err != nil {
		return err
	}
	if o.close {
		return closeInbox(t)
	}
	return nil
}

// writeWhole writes msg to the pipe fd in one go once it has room for it all;
// a message larger than the pipe is written as room appears. wait is called
// whenever there is no room, and ends the write with its error.
func writeWhole(fd int, msg []byte, wait func() error) error {
	size, err := pipeSize(fd)
	if err != nil {
		return err
	}
	written := 0
	for written < len(msg) {
		queued, err := pipeQueued(fd)
		if err != nil {
			return err
		}
		if free := size - queued; free >= len(msg)-written || (len(msg) > size && free > 0) {
			n, err := syscall.Write(fd, msg[written:])
			if n > 0 {
				written += n
			}
			switch {
			case errors.Is(err, syscall.EPIPE):
				if written > 0 {
					return errPartial
				}
				return errNoInput // the child closed its stdin
			case err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR):
				return fmt.Errorf("write: %w", err)
			}
			continue
		}
		if err := wait(); err != nil {
			if written > 0 {
				return fmt.Errorf("%w (%d of %d bytes written): %w", errPartial, written, len(msg), err)
			}
			return err
		}
	}
	return nil
}

// closeInbox removes the FIFO (so that no later send reaches the child) and
// tells the runner to close its write end. The caller holds the inbox lock.
func closeInbox(t task) error {
	if err := t.remove(inSuffix); err != nil {
		return fmt.Errorf("close input: %w", err)
	}
	f, err := os.OpenFile(t.path(ctlSuffix), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENXIO) {
		return nil // the runner is gone, and its write end with it
	}
	if err != nil {
		return fmt.Errorf("close input: %w", err)
	}
	defer f.Close()
	if _, err := f.Write([]byte{ctlClose}); err != nil {
		return fmt.Errorf("close input: %w", err)
	}
	return nil
}

// ended reports whether the task is over (or never ran): no runner holds its
// lock, or its exit is recorded (the runner is finishing).
func (t task) ended() (bool, error) {
	running, err := t.running()
	if err != nil || !running {
		return true, err
	}
	_, hasExit, err := t.readExit()
	return hasExit, err
}

func pipeSize(fd int) (int, error) {
	n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETPIPE_SZ, 0)
	if errno != 0 {
		return 0, fmt.Errorf("pipe size: %w", errno)
	}
	return int(n), nil
}

// pipeQueued is the number of bytes in the pipe not yet read.
func pipeQueued(fd int) (int, error) {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return 0, fmt.Errorf("pipe queue: %w", errno)
	}
	return int(n), nil
}
