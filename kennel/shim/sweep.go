package shim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// NoInitMessage starts what run --sweep prints when the container's PID 1 is
// not fetch-shim init (a container made from an image older than its shim, or
// not from Dockerfile.kennel): it then sweeps nothing and runs nothing, since
// it cannot tell what keeps the container alive from a leftover.
const NoInitMessage = "the kennel's PID 1 is not fetch-shim init"

// checkInit fails unless PID 1 under procRoot is fetch-shim init.
func checkInit(procRoot string) error {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(initPID), "cmdline"))
	if err != nil {
		return fmt.Errorf("%s: %w", NoInitMessage, err)
	}
	if args := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}); len(args) != 2 || string(args[0]) != Path || string(args[1]) != CmdInit {
		return fmt.Errorf("%s (it is %q): rebuild the kennel image", NoInitMessage, strings.Join(strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00"), " "))
	}
	return nil
}

// killOnly is the escalation for leftovers found when a run starts: SIGKILL,
// repeated on every tick until none is left or killWait has passed.
var killOnly = []phase{{syscall.SIGKILL, killWait}}

// clearKennel ends every stray in the kennel (every process in init's tree:
// all that is left of earlier runs) with SIGKILL, and returns once none is
// left. The trees of live docker execs (concurrent reads, stop, log) are not
// touched.
func clearKennel(ctx context.Context, procRoot string) error {
	return sweep(ctx, procRoot, target{strays: true, exclude: []int{os.Getpid()}}, killOnly)
}

// reapOrphans collects, while the runner's child runs, the ended processes
// that were reparented to the runner (a subreaper), leaving child to its own
// Wait. It reads only the runner's own children's stat files.
func reapOrphans(procRoot string, child int) {
	self := os.Getpid()
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == child || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		p, err := parseStat(b)
		if err != nil || p.ppid != self || p.state != 'Z' {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// scrub removes from the state directory whatever the shim never puts there:
// symbolic links, directories, devices and sockets, hard-linked files, FIFOs
// other than inboxes and their control FIFOs, and names that are not a task
// id with one of the shim's suffixes. A run with --sweep calls it once no
// earlier process is left, so that nothing an earlier run planted there (a
// link that would make the shim write elsewhere, a record for a later task)
// is read or followed.
func scrub(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if shimFile(e.Name(), info) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// shimFile reports whether a state directory entry is one the shim writes.
func shimFile(name string, info fs.FileInfo) bool {
	base := strings.TrimSuffix(name, ".tmp") // a record being replaced (writeJSON)
	for _, s := range []string{lockSuffix, pidSuffix, logSuffix, exitSuffix, stopSuffix, inSuffix, ctlSuffix} {
		id, ok := strings.CutSuffix(base, s)
		if !ok || !ValidTaskID(id) || base != name && s != pidSuffix && s != exitSuffix {
			continue
		}
		mode := info.Mode()
		if s == inSuffix || s == ctlSuffix {
			return mode.Type() == fs.ModeNamedPipe
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		return mode.IsRegular() && ok && st.Nlink == 1
	}
	return false
}
