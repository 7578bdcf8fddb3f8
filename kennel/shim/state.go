package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Path is where the image installs the shim.
const Path = "/usr/local/bin/fetch-shim"

// StateDir is where the shim keeps its per-task files inside the container.
const StateDir = "/tmp/fetch/tasks"

// TagEnv is the environment variable run adds to the child's environment. Every
// descendant inherits it, even one that leaves the process group.
const TagEnv = "FETCH_TASK_ID"

// Suffixes of the per-task files in StateDir.
const (
	lockSuffix = ".lock"
	pidSuffix  = ".pid"
	logSuffix  = ".log"
	exitSuffix = ".exit"
	stopSuffix = ".stop"
	inSuffix   = ".in"  // the inbox FIFO (--inbox)
	ctlSuffix  = ".ctl" // the runner's control FIFO (--inbox)
)

// maxTaskID bounds a task id; it becomes a file name.
const maxTaskID = 128

var taskIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidTaskID reports whether id can name a task: 1 to 128 characters from
// [A-Za-z0-9._-], starting with a letter or digit. Ids become file names.
func ValidTaskID(id string) bool {
	return len(id) <= maxTaskID && taskIDPattern.MatchString(id)
}

// PidRecord is the content of ID.pid.
type PidRecord struct {
	PGID      int  `json:"pgid"`
	Runner    int  `json:"runner"`
	Ephemeral bool `json:"ephemeral,omitempty"`
	// Records: the runner runs a Record program after the child.
	Records bool      `json:"records,omitempty"`
	Started time.Time `json:"started"`
}

// ExitRecord is the content of ID.exit: how the task ended.
type ExitRecord struct {
	// Code is the exit code, 128+n for death by signal n; 125, 126 or 127 when
	// the program could not be started (as a shell reports it).
	Code int `json:"code"`
	// Stopped is set when stop was asked for the task while it ran.
	Stopped bool `json:"stopped,omitempty"`
	// Lost is set when the runner died without recording the exit (it was
	// killed); Code is then meaningless.
	Lost bool `json:"lost,omitempty"`
	// Error says why the program could not be started.
	Error string    `json:"error,omitempty"`
	Ended time.Time `json:"ended"`
}

// TaskInfo is what status prints for one task and ps prints per line.
type TaskInfo struct {
	ID string `json:"id"`
	// Known is false when the shim has no trace of the task.
	Known     bool `json:"known"`
	Ephemeral bool `json:"ephemeral,omitempty"`
	// Running is true while the runner is alive.
	Running bool `json:"running"`
	PGID    int  `json:"pgid,omitempty"`
	Runner  int  `json:"runner,omitempty"`
	// Pids lists the task's live processes (group members and tagged
	// processes; the runner is not one of them).
	Pids    []int       `json:"pids,omitempty"`
	Started time.Time   `json:"started,omitzero"`
	Exit    *ExitRecord `json:"exit,omitempty"`
	// HasLog is true when a log exists to be read back.
	HasLog bool `json:"has_log,omitempty"`
}

// task names the files of one task in a state directory.
type task struct {
	dir string
	id  string
}

func (t task) path(suffix string) string { return filepath.Join(t.dir, t.id+suffix) }

// ensureDir creates the state directory, private to the kennel user, and
// checks that it and its parent are directories of this user, not links to
// somewhere else: the shim writes its records there by name.
func (t task) ensureDir() error {
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	for _, d := range []string{filepath.Dir(t.dir), t.dir} {
		if err := ownDir(d); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	return nil
}

// errNotOwnDir: a path the shim keeps state under is not a directory of its
// own user (a link, a file, another user's).
var errNotOwnDir = errors.New("not a directory of this user")

func ownDir(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: %w", path, errNotOwnDir)
	}
	return nil
}

// repairDir is ensureDir for a run that has just cleared the kennel: a state
// directory (or parent) that is not the shim's is removed and made again,
// and what the shim never writes there is removed (scrub).
func (t task) repairDir() error {
	for _, d := range []string{filepath.Dir(t.dir), t.dir} {
		if err := ownDir(d); errors.Is(err, errNotOwnDir) {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("state dir: %w", err)
			}
		}
	}
	if err := t.ensureDir(); err != nil {
		return err
	}
	if err := os.Chmod(t.dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return scrub(t.dir)
}

// lock takes the runner's exclusive lock without waiting. It returns
// errTaskBusy when another runner holds it.
func (t task) lock() (*os.File, error) {
	f, err := os.OpenFile(t.path(lockSuffix), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errTaskBusy
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	return f, nil
}

var errTaskBusy = errors.New("task is already running")

// running reports whether a runner holds the task's lock.
func (t task) running() (bool, error) {
	f, err := os.OpenFile(t.path(lockSuffix), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	return false, nil // closing f releases the shared lock
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func (t task) readPid() (PidRecord, bool, error) {
	var r PidRecord
	ok, err := readJSON(t.path(pidSuffix), &r)
	return r, ok, err
}

func (t task) readExit() (ExitRecord, bool, error) {
	var r ExitRecord
	ok, err := readJSON(t.path(exitSuffix), &r)
	return r, ok, err
}

func (t task) writePid(r PidRecord) error   { return writeJSON(t.path(pidSuffix), r) }
func (t task) writeExit(r ExitRecord) error { return writeJSON(t.path(exitSuffix), r) }

// requestStop creates the stop marker, for a task that has a runner (or had
// one): a runner clears old markers when it starts, so a marker for a task that
// never started would only be litter.
func (t task) requestStop() error {
	if _, err := os.Stat(t.path(lockSuffix)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	f, err := os.OpenFile(t.path(stopSuffix), os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("stop marker: %w", err)
	}
	return f.Close()
}

func (t task) stopRequested() bool {
	_, err := os.Stat(t.path(stopSuffix))
	return err == nil
}

func (t task) hasLog() bool {
	_, err := os.Stat(t.path(logSuffix))
	return err == nil
}

// remove deletes the task's files; missing files are fine. The lock goes last
// so that a reader never sees a task without its lock but with its records.
func (t task) remove(suffixes ...string) error {
	var errs []error
	for _, s := range suffixes {
		if err := os.Remove(t.path(s)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readJSON reads a record; a missing file is (false, nil). A file that does not
// parse is reported as missing too: records are written by rename, so that can
// only be a file being replaced, and the caller's next look will see it. A
// record that is not a regular file (a link: the shim never writes one) is
// refused.
func readJSON(path string, v any) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return false, fmt.Errorf("%s: not a record the shim wrote", filepath.Base(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord))
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, nil
	}
	return true, nil
}

// maxRecord bounds what readJSON reads of a record (they are a few hundred
// bytes).
const maxRecord = 64 << 10

// writeJSON replaces path atomically: readers see the old record or the new one.
// The temporary file is made anew (O_EXCL), so that a link left in its place
// is not followed.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// knownTasks lists the ids that have files in dir.
func knownTasks(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	var ids []string
	for _, e := range entries {
		name := e.Name()
		for _, s := range []string{lockSuffix, pidSuffix, exitSuffix, logSuffix} {
			id, ok := strings.CutSuffix(name, s)
			if ok && ValidTaskID(id) && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// info gathers what the shim knows about a task; procs is a /proc snapshot.
func (t task) info(procs []proc) (TaskInfo, error) {
	ti := TaskInfo{ID: t.id}
	running, err := t.running()
	if err != nil {
		return ti, err
	}
	ti.Running = running
	pid, hasPid, err := t.readPid()
	if err != nil {
		return ti, err
	}
	if hasPid {
		ti.PGID, ti.Runner, ti.Ephemeral, ti.Started = pid.PGID, pid.Runner, pid.Ephemeral, pid.Started
	}
	exit, hasExit, err := t.readExit()
	if err != nil {
		return ti, err
	}
	if hasExit {
		ti.Exit = &exit
	}
	ti.HasLog = t.hasLog()
	tg := target{pgid: groupOf(pid, hasPid, hasExit), tag: t.id}
	if running && hasPid {
		tg.runner = pid.Runner
	}
	ti.Pids = pidsOf(members(procs, tg))
	ti.Known = running || hasPid || hasExit || ti.HasLog || len(ti.Pids) > 0
	if ti.Known && !running && !hasExit && hasPid {
		// The runner died without recording the exit: it was killed.
		ti.Exit = &ExitRecord{Lost: true, Code: -1}
	}
	return ti, nil
}

// groupOf is the process group to target for a task: only while no exit is
// recorded, because once the runner has reaped the leader and found the group
// empty the id may be reused by an unrelated process.
func groupOf(pid PidRecord, hasPid, hasExit bool) int {
	if !hasPid || hasExit {
		return 0
	}
	return pid.PGID
}
