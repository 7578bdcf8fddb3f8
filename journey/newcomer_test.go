package journey

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// The README's first-task steps are the lines of the indented block
// between these markers. The newcomer test runs them as they are written.
const (
	firstTaskBegin = "<!-- first-task -->"
	firstTaskEnd   = "<!-- /first-task -->"
)

// newcomerUID is the unprivileged user of the newcomer test: no account,
// no home but the one the test makes, in the Docker socket's group (as the
// README asks of a user who is not root).
const newcomerUID = 4242

// TestNewcomer follows the README's first-task steps literally on a fresh
// home (so the default data directory, closed to others), as root and as
// an unprivileged user: go install, fetch doctor saying what is missing,
// the documented kennel build, fetch workspace add, fetch doctor again and
// fetch task run --wait completing a task. The substitutions are the ones
// a test must make, and only those: the CLI to install is the scripted one
// (--cli claude=FILE, the form the build script documents for a CLI given
// as a file), the kennel image gets a name of the test's own (so that a
// developer's fetch-kennel:latest is left alone), and the CLI's key is a
// fake one. The Go caches are not the newcomer's: the test has no network
// (see userCaches), and what they hold changes only how long the build
// takes, not what it makes.
func TestNewcomer(t *testing.T) {
	// Beside the other journeys: it holds no state of theirs (its own
	// home, checkout, caches and image), and mostly compiles, which the
	// journeys that wait on their CLIs leave room for.
	t.Parallel()
	testkit.RequireDocker(t)
	steps := firstTaskSteps(t)
	for _, who := range []struct {
		name string
		uid  int
	}{{"root", 0}, {"user", newcomerUID}} {
		t.Run(who.name, func(t *testing.T) {
			t.Parallel()
			if os.Geteuid() != 0 {
				t.Skip("needs root: the test runs the steps as root and as another user")
			}
			newcomer(t, steps, who.uid)
		})
	}
}

// firstTaskSteps are the README's first-task command lines, without their
// comments.
func firstTaskSteps(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), firstTaskBegin)
	block, _, ok2 := strings.Cut(rest, firstTaskEnd)
	if !ok || !ok2 {
		t.Fatalf("README.md has no first-task block between %s and %s", firstTaskBegin, firstTaskEnd)
	}
	var steps []string
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(line, "    ") {
			continue
		}
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "  #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line != "" {
			steps = append(steps, line)
		}
	}
	if len(steps) < 4 {
		t.Fatalf("README.md's first-task block has %d steps: %q", len(steps), steps)
	}
	return steps
}

// newcomer runs the steps as uid (0: root) in a new home.
func newcomer(t *testing.T, steps []string, uid int) {
	base, err := os.MkdirTemp("", "fetch-newcomer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	home := filepath.Join(base, "home")
	checkout := filepath.Join(home, "fetch")
	copyCheckout(t, repoRoot(t), checkout)
	cli := filepath.Join(home, "bin", "claude")
	copyFile(t, testkit.FakeCLI(t), cli, 0o755)
	demo := filepath.Join(home, "src", "demo")
	gitInit(t, demo)
	image := fmt.Sprintf("fetch-kennel-newcomer-%d:test", uid)
	t.Cleanup(func() { exec.Command("docker", "image", "rm", "-f", image).Run() })

	env := map[string]string{
		"HOME":        home,
		"PATH":        filepath.Join(home, "go", "bin") + ":" + filepath.Dir(goTool()) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"GOTOOLCHAIN": "local",
		// The release build's flags, which the rest of the suite compiled
		// Fetch with: the README's go install then finds its packages
		// compiled (-trimpath makes the copied checkout's the same as the
		// suite's), and builds the same program.
		"GOFLAGS": strings.Join(releaseFlags, " "),
		// The page's default port is shared with the other journeys.
		"FETCH_PAGE_ADDR": "off",
		// The test's own kennel image from the first step: the first
		// doctor's verdict on the missing image must not depend on a
		// fetch-kennel:latest that the machine holds (it does wherever
		// someone followed the README).
		"FETCH_KENNEL_IMAGE": image,
	}
	// The machine's, not the newcomer's: the engine, the temporary
	// directory, and the C flags the rest of the suite compiled with (CI
	// sets them), so that root's build finds what the suite compiled.
	for _, k := range []string{"DOCKER_HOST", "TMPDIR", "CGO_CFLAGS"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	var cred *syscall.Credential
	if uid == 0 {
		// Root's own Go caches: the build is the README's, the time is
		// not spent twice.
		for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
			env[k] = goEnv(t, k)
		}
	} else {
		mods, cache := userCaches(t, checkout, base, uid)
		env["GOMODCACHE"] = mods
		env["GOCACHE"] = cache
		env["GOPROXY"] = "off"
		sock := "/var/run/docker.sock"
		if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
			sock = strings.TrimPrefix(h, "unix://")
		}
		st, err := os.Stat(sock)
		if err != nil {
			t.Skipf("no Docker socket to share with the user: %v", err)
		}
		gid := st.Sys().(*syscall.Stat_t).Gid
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{gid}}
		chownTree(t, home, uid)
	}
	os.Chmod(home, 0o700)

	doctors := 0
	for _, step := range steps {
		if k, v, ok := strings.Cut(strings.TrimPrefix(step, "export "), "="); ok && strings.HasPrefix(step, "export ") {
			if k == "ANTHROPIC_API_KEY" {
				v = "sk-ant-newcomer-0123456789abcdef"
			}
			env[k] = v
			continue
		}
		argv := splitStep(t, step, home)
		switch {
		case argv[0] == "scripts/build-images.sh":
			for i, a := range argv {
				if a == "--cli" && i+1 < len(argv) && argv[i+1] == "claude" {
					argv[i+1] = "claude=" + cli
				}
			}
			argv = append(argv, "--kennel-image", image)
		}
		out, code := runStep(t, checkout, env, cred, argv)
		t.Logf("$ %s\n%s(exit %d)", strings.Join(argv, " "), out, code)
		switch {
		case len(argv) > 1 && argv[0] == "fetch" && argv[1] == "doctor":
			doctors++
			if doctors == 1 {
				// Before the kennel is built: it says what is missing and
				// how to build it.
				if code == 0 || !regexp.MustCompile(`(?m)^fail\s+image\s.*scripts/build-images\.sh`).MatchString(out) {
					t.Errorf("the first fetch doctor should fail on the missing kennel image and name the build (exit %d):\n%s", code, out)
				}
			} else if code != 0 {
				t.Errorf("fetch doctor after the README's steps failed (exit %d):\n%s", code, out)
			}
		case len(argv) > 2 && argv[0] == "fetch" && argv[1] == "task" && argv[2] == "run":
			if code != 0 || !strings.Contains(out, "succeeded on demo") || !strings.Contains(out, "FETCH_DONE.md") {
				t.Errorf("the first task did not succeed (exit %d):\n%s", code, out)
			}
		case code != 0:
			t.Fatalf("%s failed (exit %d):\n%s", step, code, out)
		}
	}
	if doctors == 0 {
		t.Error("the README's first-task steps never run fetch doctor")
	}
	// The data directory is the default one, and closed to others.
	data := filepath.Join(home, ".local", "share", "fetch")
	if st, err := os.Stat(data); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the default data directory %s: %v, %v; want mode 0700", data, st, err)
	}
	removeKennels(t, filepath.Join(data, "workspaces"))
}

// splitStep splits a README command line into its words: single and
// double quotes group, ~/ is the home directory. No other shell syntax is
// allowed in the README's steps.
func splitStep(t *testing.T, line, home string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune("|&;<>$`\\*?", r):
			t.Fatalf("README step %q uses shell syntax (%q): keep the first-task steps plain commands", line, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("README step %q has an unclosed quote", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		if strings.HasPrefix(w, "~/") {
			words[i] = filepath.Join(home, w[2:])
		}
	}
	return words
}

// runStep runs argv in dir with exactly env, as cred (nil: this process's
// user), and returns its combined output and exit code.
func runStep(t *testing.T, dir string, env map[string]string, cred *syscall.Credential, argv []string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	name := argv[0]
	if !strings.Contains(name, "/") {
		for _, p := range filepath.SplitList(env["PATH"]) {
			if st, err := os.Stat(filepath.Join(p, name)); err == nil && !st.IsDir() {
				name = filepath.Join(p, name)
				break
			}
		}
	}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Dir = dir
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// copyCheckout copies the files git knows in src (tracked, and new ones
// not ignored) to dst: the newcomer's clone of this checkout.
func copyCheckout(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		st, err := os.Lstat(filepath.Join(src, name))
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		copyFile(t, filepath.Join(src, name), filepath.Join(dst, name), st.Mode().Perm())
	}
}

func copyFile(t *testing.T, src, dst string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// gitInit makes a repository with one commit on main at dir: the
// newcomer's own project.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# demo\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=New Comer", "-c", "user.email=new@example.com", "commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func chownTree(t *testing.T, root string, uid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// userCaches are the Go caches of the newcomer uid, who has none, and the
// test no network. Where uid can read root's module cache (.ci/run puts it
// where anyone can), the user's build uses it, and a copy of root's build
// cache made of hard links that the user may add to: the modules being at
// the same paths, the user's build finds what the suite compiled and
// compiles only Fetch's own packages, as root's does. Elsewhere the user's
// module cache is filled from root's, the way the module proxy would fill
// it (a file:// GOPROXY is the proxy protocol), and both caches are the
// user's own, kept between runs.
func userCaches(t *testing.T, checkout, base string, uid int) (mods, cache string) {
	t.Helper()
	rootMods, rootCache := goEnv(t, "GOMODCACHE"), goEnv(t, "GOCACHE")
	if othersRead(rootMods) {
		cache = filepath.Join(base, "gocache")
		out, err := exec.Command("cp", "-al", rootCache, cache).CombinedOutput()
		if err == nil && othersReadFiles(cache) {
			chownDirs(t, cache, uid)
			return rootMods, cache
		}
		t.Logf("root's build cache cannot be shared (%v %s): the user's own", err, out)
		os.RemoveAll(cache)
	}
	mods = filepath.Join(os.TempDir(), fmt.Sprintf("fetch-newcomer-gomodcache-%d", uid))
	// Only the modules of what the README builds: root's cache holds
	// those (its own builds fetched them), not every module of the graph
	// (Windows-only ones, say).
	download := exec.Command(goTool(), append([]string{"mod", "download"}, buildModules(t, checkout, "./cmd/fetch", "./cmd/fetch-shim")...)...)
	download.Dir = checkout
	download.Env = append(os.Environ(), "GOMODCACHE="+mods, "GOFLAGS=-modcacherw", "GOPROXY=file://"+filepath.Join(rootMods, "cache", "download"), "GOSUMDB=off")
	if out, err := download.CombinedOutput(); err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	chownTree(t, mods, uid)
	cache = filepath.Join(os.TempDir(), fmt.Sprintf("fetch-newcomer-gocache-%d", uid))
	os.MkdirAll(cache, 0o700)
	chownTree(t, cache, uid)
	return mods, cache
}

// othersRead says whether anyone may read dir: it and every directory
// above it let others in, and it lets them list it.
func othersRead(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm()&0o005 != 0o005 {
		return false
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// othersReadFiles says whether every file under root may be read by
// anyone (a build cache written under a strict umask may not).
func othersReadFiles(root string) bool {
	ok := true
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return err
		}
		if info, err := d.Info(); err != nil || (!d.IsDir() && info.Mode().Perm()&0o004 == 0) {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return ok
}

// chownDirs gives uid the directories under root (not the files: in a
// copy made of hard links they are root's too).
func chownDirs(t *testing.T, root string, uid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command(goTool(), "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// removeKennels removes the kennel containers of the workspaces under
// root, which the newcomer's Fetch left running (as Fetch does).
func removeKennels(t *testing.T, root string) {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=fetch.workspace").Output()
	if err != nil {
		return
	}
	for _, id := range strings.Fields(string(out)) {
		lbl, _ := exec.Command("docker", "inspect", "-f", `{{index .Config.Labels "fetch.workspace"}}`, id).Output()
		if strings.HasPrefix(strings.TrimSpace(string(lbl)), root+"/") {
			exec.Command("docker", "rm", "-f", id).Run()
		}
	}
}

// buildModules lists the modules (path@version) the packages of dir need
// to build, from root's module cache.
func buildModules(t *testing.T, dir string, pkgs ...string) []string {
	t.Helper()
	list := exec.Command(goTool(), append([]string{"list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}"}, pkgs...)...)
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	return mods
}
