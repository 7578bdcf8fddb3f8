package task

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// An owner names the engine that follows a task's run: "pid:start:nonce",
// where start is the process's start time in clock ticks since boot
// (/proc/PID/stat), so that a recycled pid is not taken for the process
// that died, and nonce tells apart engines in one process. Fetch
// processes sharing a data directory share a pid namespace (the same
// host, or the same container).

// newOwner names a new engine of this process.
func newOwner() string {
	pid := os.Getpid()
	return fmt.Sprintf("%d:%s:%s", pid, processStart(pid), randomID())
}

// ownerAlive reports whether the process an owner names still runs.
func ownerAlive(owner string) bool {
	pidStr, rest, ok := strings.Cut(owner, ":")
	if !ok {
		return false
	}
	start, _, _ := strings.Cut(rest, ":")
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	got := processStart(pid)
	return got != "" && got == start
}

// processStart returns field 22 of /proc/PID/stat, or "" when the process
// does not exist.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may contain spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); a zombie is as good as dead.
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}
