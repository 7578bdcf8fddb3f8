package journey

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// Taking the work home: fetch task apply ID [DIR] brings a task's branch
// from Fetch's own repository into the owner's own clone and checks it
// out, as root and as an ordinary user (whose Fetch data root reads:
// git's "dubious ownership" is what it gets past, for that repository
// only); bad input changes nothing.

// applyUID is the ordinary user of the journey when it runs as root.
const applyUID = 4242

// ownClone is the owner's own clone of workspace ws's main branch (made
// from a copy of its repository: no git runs in the kennel's folder),
// owned by uid.
func (w *world) ownClone(ws string, uid int) string {
	w.t.Helper()
	root := w.t.TempDir()
	os.Chmod(root, 0o755)
	src := filepath.Join(root, "src.git")
	mine := filepath.Join(root, "mine")
	for _, args := range [][]string{
		{"cp", "-r", filepath.Join(w.workspacePath(ws), ".git"), src},
		{"git", "clone", "-q", "--single-branch", "--branch", "main", src, mine},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			w.t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if uid != os.Getuid() {
		chownTree(w.t.(*testing.T), mine, uid)
	}
	return mine
}

// fetchAs runs the fetch binary bin as uid (the test's own user when uid
// is its own) in dir, and returns its output and exit code.
func (w *world) fetchAs(uid int, bin, dir string, args ...string) (string, int) {
	w.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = w.environ(), dir
	if uid != os.Getuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		w.t.Fatalf("fetch %v: %v", args, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// fetchSlow is fetchCLI for a command that starts a kennel, which takes
// a while on a busy machine.
func (w *world) fetchSlow(args ...string) (string, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fetchBinary(w.t), args...)
	cmd.Env = w.environ()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitIn runs git in dir and returns its trimmed output ("" on error).
func gitIn(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// noWorker waits until no task worker of task id runs: what it writes
// into the data directory is written.
func noWorker(t *testing.T, id string) {
	t.Helper()
	until(t, waitTimeout, "the worker of task "+id+" to end", func() bool {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte("follow\x00")) && bytes.Contains(b, []byte(id)) {
				return false
			}
		}
		return true
	})
}

func TestJourneyApplyBringsTheWorkHome(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	goal := "add a health endpoint [file:health.go]"
	out, err := w.fetchSlow("task", "run", "--wait", "--workspace", "app", goal)
	m := regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("fetch task run: %v\n%s", err, out)
	}
	id := m[1]
	if !strings.Contains(out, "Take it into your clone: `fetch task apply "+id+"`") {
		t.Errorf("the task's result does not say how to take the work:\n%s", out)
	}
	if shown, _ := w.fetchCLI("task", "show", id); !regexp.MustCompile(`Take it:\s+fetch task apply ` + id + `\n`).MatchString(shown) {
		t.Errorf("fetch task show does not say how to take the work:\n%s", shown)
	}
	// A task whose run changed nothing has no commits to apply.
	out, _ = w.fetchSlow("task", "run", "--wait", "--workspace", "app", "give up [scenario:fail:1]")
	m = regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("fetch task run (failing): %s", out)
	}
	failed := m[1]
	noWorker(t, id)
	noWorker(t, failed)

	// The binary where another user can run it.
	binDir := t.TempDir()
	os.Chmod(binDir, 0o755)
	bin := filepath.Join(binDir, "fetch")
	if data, err := os.ReadFile(fetchBinary(t)); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatalf("copy the binary: %v", err)
	}

	root := os.Getuid() == 0
	user := os.Getuid()
	if root {
		// Fetch's data becomes the user's, as when the user runs Fetch;
		// the workspaces stay the kennel's.
		user = applyUID
		filepath.WalkDir(w.data, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == w.wsRoot {
				return filepath.SkipDir
			}
			return os.Lchown(p, user, user)
		})
	}
	checkApplied := func(t *testing.T, mine, out string, code int) {
		t.Helper()
		if code != 0 {
			t.Fatalf("fetch task apply exited %d:\n%s", code, out)
		}
		if b := gitIn(mine, "symbolic-ref", "--short", "HEAD"); b != "fetch/"+id {
			t.Errorf("the clone is on %q after apply; want fetch/%s\n%s", b, id, out)
		}
		if s := gitIn(mine, "log", "-1", "--format=%s"); s != goal {
			t.Errorf("the work's commit subject is %q; want the goal %q", s, goal)
		}
		if b, err := os.ReadFile(filepath.Join(mine, "health.go")); err != nil || len(b) == 0 {
			t.Errorf("the task's file is not in the clone: %v", err)
		}
		if !strings.Contains(out, "on branch fetch/"+id+" in "+mine) {
			t.Errorf("fetch task apply did not say where the work is:\n%s", out)
		}
	}

	t.Run("as a user", func(t *testing.T) {
		mine := w.ownClone("app", user)
		out, code := w.fetchAs(user, bin, mine, "task", "apply", id)
		checkApplied(t, mine, out, code)
	})

	t.Run("bad input", func(t *testing.T) {
		mine := w.ownClone("app", user)
		head := gitIn(mine, "rev-parse", "HEAD")
		notRepo := w.t.TempDir()
		os.Chmod(notRepo, 0o755)
		os.Chown(notRepo, user, user)
		for _, c := range []struct {
			name string
			args []string
			want string
			prep func()
		}{
			{"unknown task", []string{"task", "apply", "ffff0000", mine}, "no such task", nil},
			{"no commits", []string{"task", "apply", failed, mine}, "has no commits to apply", nil},
			{"not a repository", []string{"task", "apply", id, notRepo}, "is not a git repository", nil},
			{"the kennel's folder", []string{"task", "apply", id, w.workspacePath("app")}, "which Fetch (or the kennel) writes", nil},
			{"would overwrite", []string{"task", "apply", id, mine}, "would be overwritten", func() {
				os.WriteFile(filepath.Join(mine, "health.go"), []byte("mine\n"), 0o644)
				os.Chown(filepath.Join(mine, "health.go"), user, user)
			}},
		} {
			if c.prep != nil {
				c.prep()
			}
			out, code := w.fetchAs(user, bin, mine, c.args...)
			if code == 0 || !strings.Contains(out, c.want) {
				t.Errorf("%s: exit %d; want an error saying %q:\n%s", c.name, code, c.want, out)
			}
			if b := gitIn(mine, "branch", "--list", "fetch/*"); b != "" {
				t.Errorf("%s: a refused apply made branch %q", c.name, b)
			}
			if h := gitIn(mine, "rev-parse", "HEAD"); h != head {
				t.Errorf("%s: a refused apply moved HEAD to %s", c.name, h)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(mine, "health.go")); string(b) != "mine\n" {
			t.Errorf("a refused apply changed the owner's file: %q", b)
		}
	})

	t.Run("as root", func(t *testing.T) {
		if !root {
			t.Skip("the test does not run as root: root's apply (Fetch's data another user's) cannot be tried")
		}
		mine := w.ownClone("app", 0)
		out, code := w.fetchAs(0, bin, mine, "task", "apply", id)
		checkApplied(t, mine, out, code)
	})
}
