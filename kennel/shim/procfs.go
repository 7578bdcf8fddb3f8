package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// proc is one process as /proc shows it.
type proc struct {
	pid   int
	ppid  int // 0 for the container's init and for a process docker exec started
	pgid  int
	state byte   // R, S, D, Z, T, …
	tag   string // value of TagEnv in its environment, "" when absent or unreadable
}

// scanProcs reads every process under root (normally "/proc"). Processes that
// vanish while being read, or whose environment cannot be read (another user's),
// are skipped or left untagged.
func scanProcs(root string) ([]proc, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	var procs []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue // gone
		}
		p, err := parseStat(stat)
		if err != nil || p.pid != pid {
			continue
		}
		if env, err := os.ReadFile(filepath.Join(root, e.Name(), "environ")); err == nil {
			p.tag = envValue(env, TagEnv)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// parseStat reads pid, state, parent and process group from /proc/PID/stat. The command
// name (field 2) is in parentheses and may itself contain spaces and
// parentheses, so the fields after it are found from the last ')'.
func parseStat(b []byte) (proc, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return proc{}, errors.New("stat: no command name")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return proc{}, fmt.Errorf("stat: pid: %w", err)
	}
	// After ") ": state ppid pgrp …
	rest := bytes.Fields(b[end+1:])
	if len(rest) < 3 || len(rest[0]) != 1 {
		return proc{}, errors.New("stat: too few fields")
	}
	ppid, err := strconv.Atoi(string(rest[1]))
	if err != nil {
		return proc{}, fmt.Errorf("stat: ppid: %w", err)
	}
	pgid, err := strconv.Atoi(string(rest[2]))
	if err != nil {
		return proc{}, fmt.Errorf("stat: pgrp: %w", err)
	}
	return proc{pid: pid, ppid: ppid, state: rest[0][0], pgid: pgid}, nil
}

// envValue returns the value of key in a NUL-separated environment block.
func envValue(env []byte, key string) string {
	prefix := []byte(key + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// initPID is the container's init. Its ppid is 0, as is that of every
// process docker exec starts (its parent is outside the container's PID
// namespace); an orphan is reparented to it, unless an ancestor of the orphan
// is a child subreaper (every runner is one).
const initPID = 1

// lineage tells, from one /proc snapshot, which tree each process belongs to:
// the tree of a docker exec (rooted at a ppid-0 process other than init) or
// init's tree (orphans, and whatever they started).
type lineage struct {
	byPID map[int]proc
	roots map[int]int
}

func newLineage(procs []proc) *lineage {
	l := &lineage{byPID: make(map[int]proc, len(procs)), roots: make(map[int]int, len(procs))}
	for _, p := range procs {
		l.byPID[p.pid] = p
	}
	return l
}

// root returns the pid at the top of pid's ancestry: init (initPID) for an
// orphan's tree, the ppid-0 process a docker exec started for an exec's
// tree, or 0 when the ancestry is unknown (a parent vanished between the
// reads, and the process is being reparented: the next snapshot knows).
func (l *lineage) root(pid int) int {
	var path []int
	root := 0
	for cur, hops := pid, 0; hops <= len(l.byPID); hops++ {
		if r, ok := l.roots[cur]; ok {
			root = r
			break
		}
		p, ok := l.byPID[cur]
		if !ok {
			break // unknown
		}
		path = append(path, cur)
		if p.ppid == 0 {
			root = cur
			break
		}
		cur = p.ppid
	}
	for _, p := range path {
		l.roots[p] = root
	}
	return root
}

// descends reports whether pid is a descendant of anc (not anc itself).
func (l *lineage) descends(pid, anc int) bool {
	for cur, hops := pid, 0; hops <= len(l.byPID); hops++ {
		p, ok := l.byPID[cur]
		if !ok || p.ppid == 0 {
			return false
		}
		if p.ppid == anc {
			return true
		}
		cur = p.ppid
	}
	return false
}

// stray reports whether p lives in init's tree: started by nobody Fetch
// still runs (an orphan, or a process an orphan started).
func (l *lineage) stray(p proc) bool {
	return p.pid != initPID && l.root(p.pid) == initPID
}

// target selects processes. Only two kinds are ever selected: strays (in
// init's tree) and descendants of runner, the task's runner; a process in
// the tree of any other live docker exec is never touched, whatever its
// group or tag, so that a record naming another exec's group selects nothing
// there. Among those: the members of process group pgid (pgid > 0), the
// processes tagged with the task id, with descendants every descendant of
// runner, and with strays every stray. exclude lists pids never to touch (the
// caller itself).
type target struct {
	pgid        int
	tag         string
	runner      int
	descendants bool
	strays      bool
	exclude     []int
}

// members returns the live (not zombie) processes of t in procs.
func members(procs []proc, t target) []proc {
	l := newLineage(procs)
	var out []proc
	for _, p := range procs {
		if p.state == 'Z' || p.state == 'X' || p.pid == initPID || slices.Contains(t.exclude, p.pid) {
			continue
		}
		own := t.runner > 0 && l.descends(p.pid, t.runner)
		stray := !own && l.stray(p)
		if !own && !stray {
			continue // another exec's, or not known yet
		}
		if own && t.descendants || stray && t.strays ||
			t.pgid > 0 && p.pgid == t.pgid || t.tag != "" && p.tag == t.tag {
			out = append(out, p)
		}
	}
	return out
}

func pidsOf(procs []proc) []int {
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.pid)
	}
	return pids
}
