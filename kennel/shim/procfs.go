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

// parseStat reads pid, state and process group from /proc/PID/stat. The command
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
	pgid, err := strconv.Atoi(string(rest[2]))
	if err != nil {
		return proc{}, fmt.Errorf("stat: pgrp: %w", err)
	}
	return proc{pid: pid, state: rest[0][0], pgid: pgid}, nil
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

// target selects a task's processes: the members of a process group (pgid > 0)
// and every process tagged with the task id. exclude lists pids never to touch
// (the caller itself, the runner).
type target struct {
	pgid    int
	tag     string
	exclude []int
}

// members returns the live (not zombie) processes of t in procs.
func members(procs []proc, t target) []proc {
	var out []proc
	for _, p := range procs {
		if p.state == 'Z' || p.state == 'X' || slices.Contains(t.exclude, p.pid) {
			continue
		}
		if (t.pgid > 0 && p.pgid == t.pgid) || (t.tag != "" && p.tag == t.tag) {
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
