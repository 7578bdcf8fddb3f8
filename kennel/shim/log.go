package shim

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Stream identifies an output stream in a log frame, with Docker's numbering.
type Stream byte

// Streams in log frames.
const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// frameHeader is the size of a frame header: stream, three zero bytes, and the
// payload length as a big-endian uint32 (Docker's stdcopy format).
const frameHeader = 8

// maxFrame bounds one frame's payload; the runner writes at most one pipe read
// (copyBuffer) per frame, so anything larger is a corrupt log.
const maxFrame = 1 << 20

// copyBuffer is the size of the runner's reads from the child's pipes.
const copyBuffer = 32 << 10

// logWriter appends frames to a task log. It is shared by the runner's stdout
// and stderr copiers.
type logWriter struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
	err error // first write error; later frames are dropped
}

// writeFrame appends one frame with a single write, so that a reader sees
// whole frames except at the very end of the file.
func (w *logWriter) writeFrame(s Stream, p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = appendFrame(w.buf[:0], s, p)
	if _, err := w.f.Write(w.buf); err != nil {
		w.err = err
		return err
	}
	return nil
}

func appendFrame(b []byte, s Stream, p []byte) []byte {
	b = append(b, byte(s), 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
	return append(b, p...)
}

// frameReader reads frames from a log that may still be growing.
type frameReader struct {
	f   *os.File
	off int64
	hdr [frameHeader]byte
	buf []byte
}

// next returns the next whole frame, or io.EOF when the file ends before one
// (possibly in the middle of a frame still being written).
func (r *frameReader) next() (Stream, []byte, error) {
	n, err := r.f.ReadAt(r.hdr[:], r.off)
	if n < frameHeader {
		if err == nil || errors.Is(err, io.EOF) {
			return 0, nil, io.EOF
		}
		return 0, nil, err
	}
	s := Stream(r.hdr[0])
	size := binary.BigEndian.Uint32(r.hdr[4:])
	if (s != Stdout && s != Stderr) || size > maxFrame {
		return 0, nil, fmt.Errorf("corrupt log at offset %d", r.off)
	}
	if cap(r.buf) < int(size) {
		r.buf = make([]byte, size)
	}
	r.buf = r.buf[:size]
	n, err = r.f.ReadAt(r.buf, r.off+frameHeader)
	if n < int(size) {
		if err == nil || errors.Is(err, io.EOF) {
			return 0, nil, io.EOF
		}
		return 0, nil, err
	}
	r.off += frameHeader + int64(size)
	return s, r.buf, nil
}

// drain writes every whole frame available now to stdout or stderr.
func (r *frameReader) drain(stdout, stderr io.Writer) error {
	for {
		s, p, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		w := stdout
		if s == Stderr {
			w = stderr
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
}

// replayLog writes a task's log to stdout and stderr. With follow, it keeps
// going while the runner is alive and returns once it has written everything
// the runner wrote. The end is seen through inotify: the runner's log
// descriptor is closed (IN_CLOSE_WRITE) when it ends, however it ends.
func replayLog(ctx context.Context, dir, id string, follow bool, stdout, stderr io.Writer) error {
	t := task{dir: dir, id: id}
	var w *watcher
	if follow {
		var err error
		// Watch before looking, so that no event between the look and the
		// wait is missed.
		if w, err = newWatcher(dir, t.id+logSuffix); err != nil {
			return err
		}
		defer w.close()
	}
	running, err := t.running()
	if err != nil {
		return err
	}
	f, err := os.Open(t.path(logSuffix))
	for errors.Is(err, fs.ErrNotExist) && follow && running {
		// The runner has not created its log yet.
		if running, err = w.wait(ctx); err != nil {
			return err
		}
		if !running {
			running, err = t.running()
			if err != nil {
				return err
			}
		}
		f, err = os.Open(t.path(logSuffix))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errNoLog
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := &frameReader{f: f}
	for {
		if err := r.drain(stdout, stderr); err != nil {
			return err
		}
		if !follow || !running {
			return nil
		}
		if running, err = w.wait(ctx); err != nil {
			return err
		}
	}
}

var errNoLog = errors.New("no log for this task")

// watcher reports changes of one file in a directory through inotify.
type watcher struct {
	f    *os.File
	name string
	buf  []byte
}

const inotifyMask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_MOVED_TO

func newWatcher(dir, name string) (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, inotifyMask); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("inotify: watch %s: %w", dir, err)
	}
	// A non-blocking descriptor goes to the runtime poller, so reads wait
	// without holding a thread and a deadline or Close can end them.
	return &watcher{f: os.NewFile(uintptr(fd), "inotify"), name: name, buf: make([]byte, 64<<10)}, nil
}

// wait blocks until the file changed. It returns false when the writer closed
// it (the runner is done with the log).
func (w *watcher) wait(ctx context.Context) (bool, error) {
	stop := context.AfterFunc(ctx, func() { w.f.Close() })
	defer stop()
	for {
		n, err := w.f.Read(w.buf)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("inotify: %w", err)
		}
		changed, open := false, true
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := w.buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if string(bytes.TrimRight(name, "\x00")) != w.name {
				continue
			}
			changed = true
			if ev.Mask&syscall.IN_CLOSE_WRITE != 0 {
				open = false
			}
		}
		if changed {
			return open, nil
		}
	}
}

func (w *watcher) close() { w.f.Close() }
