package shim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// marked lists the live processes whose command line contains mark.
func marked(t *testing.T, mark string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err1 != nil || err2 != nil {
			continue
		}
		if p, err := parseStat(stat); err == nil && p.state != 'Z' && bytes.Contains(cmdline, []byte(mark)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killMarked(t *testing.T, mark string) {
	t.Cleanup(func() {
		for _, pid := range marked(t, mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// TestRunEndsWhatLeftTheChild: a child that leaves daemons with neither its
// group nor its tag (env -i setsid, double-forked, ignoring SIGTERM and
// SIGINT, one forking on and on) leaves nothing once the run has ended: they
// came back to the runner, a subreaper, which ended them.
func TestRunEndsWhatLeftTheChild(t *testing.T) {
	e := newShimEnv(t)
	id := newID(t)
	mark := "mark" + newID(t)
	killMarked(t, mark)
	daemon := `trap "" TERM INT HUP; while :; do sleep 0.2 & sleep 0.01; done`
	script := `env -i /usr/bin/setsid sh -c '` + daemon + `' ` + mark + ` &
( env -i /usr/bin/setsid sh -c '` + daemon + `' ` + mark + ` & ) &
sleep 0.3; echo ready`
	start := time.Now()
	_, errOut, code := e.run([]string{CmdRun, "--task", id, "--grace", "200ms"}, "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if left := marked(t, mark); len(left) > 0 {
		t.Errorf("processes left after the run ended: %v", left)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the run took %v", took)
	}
}

// TestRunSweepNeedsInit: a tracked run refuses to start where PID 1 is not
// fetch-shim init (here, the host), and starts nothing.
func TestRunSweepNeedsInit(t *testing.T) {
	e := newShimEnv(t)
	marker := filepath.Join(t.TempDir(), "ran")
	_, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--sweep"}, "touch", marker)
	if code != ExitShimFailed || !strings.Contains(errOut, NoInitMessage) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitShimFailed, NoInitMessage)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the child ran")
	}
	if _, errOut, code := e.run([]string{CmdRun, "--task", newID(t), "--sweep", "--ephemeral"}, "true"); code != ExitShimFailed {
		t.Errorf("--sweep with --ephemeral: exit %d (%s)", code, errOut)
	}
}

// TestInitReapsAndEndsOnTERM: init (here not PID 1, so a subreaper) reaps
// what is reparented to it and exits 0 on SIGTERM, not on SIGHUP.
func TestInitReapsAndEndsOnTERM(t *testing.T) {
	e := newShimEnv(t)
	cmd := e.command([]string{CmdInit})
	cmd.Args = slices.DeleteFunc(cmd.Args, func(a string) bool { return a == "--state" || a == e.state })
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// init has set up its handlers once it ignores SIGUSR2, the last it
	// ignores (not SIGHUP: a test run under nohup starts init with SIGHUP
	// ignored already, and Go keeps that).
	deadline := time.Now().Add(10 * time.Second)
	for !ignores(t, cmd.Process.Pid, syscall.SIGUSR2) {
		if time.Now().After(deadline) {
			t.Fatal("init never came to ignore SIGUSR2")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("init: %v (%s)", err, errOut.String())
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("init did not end on SIGTERM")
	}
}

// ignores says whether process pid ignores sig (its SigIgn mask in
// /proc/PID/status).
func ignores(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if hex, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatalf("SigIgn %q: %v", hex, err)
			}
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return false
}

func TestCheckInit(t *testing.T) {
	root := t.TempDir()
	write := func(cmdline string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, "1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "1", "cmdline"), []byte(cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(Path + "\x00init\x00")
	if err := checkInit(root); err != nil {
		t.Errorf("fetch-shim init: %v", err)
	}
	write("/usr/bin/tini\x00--\x00sleep\x00infinity\x00")
	if err := checkInit(root); err == nil || !strings.Contains(err.Error(), NoInitMessage) {
		t.Errorf("tini: %v", err)
	}
}

// TestScrubKeepsOnlyWhatTheShimWrites: links, directories, stray FIFOs,
// hard-linked files and unknown names go; the shim's files stay.
func TestScrubKeepsOnlyWhatTheShimWrites(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"t1.lock", "t1.pid", "t1.log", "t1.exit", "t1.stop", "t1.exit.tmp", "notes.txt", "t1.log.tmp", "t2.log"} {
		file(n)
	}
	for _, n := range []string{"t1.in", "t1.ctl", "t1.pipe"} {
		if err := syscall.Mkfifo(filepath.Join(dir, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "t3.exit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "t4.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "t2.log"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := scrub(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"t1.ctl", "t1.exit", "t1.exit.tmp", "t1.in", "t1.lock", "t1.log", "t1.pid", "t1.stop"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after scrub (-want +got):\n%s", diff)
	}
}

// TestRecordsAreNotFollowedThroughLinks: a record that is a link is refused,
// and a link in the place of a record being written is replaced, not
// written through.
func TestRecordsAreNotFollowedThroughLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte(`{"code":0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tk := task{dir: dir, id: "t1"}
	if err := os.Symlink(victim, tk.path(exitSuffix)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tk.readExit(); err == nil {
		t.Error("read a record through a link")
	}
	if err := os.Symlink(victim, tk.path(pidSuffix)+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := tk.writePid(PidRecord{PGID: 7}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != `{"code":0}` {
		t.Errorf("the link's target was written: %q", b)
	}
	if r, ok, err := tk.readPid(); err != nil || !ok || r.PGID != 7 {
		t.Errorf("readPid = %+v, %v, %v", r, ok, err)
	}
}

// TestStateDirMustBeTheShims: a state directory that is a link is refused by
// every command, and repaired by a run that cleared the kennel.
func TestStateDirMustBeTheShims(t *testing.T) {
	parent := t.TempDir()
	elsewhere := t.TempDir()
	dir := filepath.Join(parent, "tasks")
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	tk := task{dir: dir, id: "t1"}
	if err := tk.ensureDir(); err == nil {
		t.Error("ensureDir accepted a link")
	}
	if err := tk.repairDir(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
		t.Errorf("after repair: %v, %v", info, err)
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the link's target went: %v", err)
	}
}
