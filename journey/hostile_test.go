package journey

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// hostileHooks are the hooks a CLI plants in .git/hooks (or behind
// core.hooksPath): each writes a marker when it runs.
var hostileHooks = []string{
	"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
	"post-merge", "post-rewrite", "pre-auto-gc", "reference-transaction",
	"post-index-change", "pre-push", "push-to-checkout",
}

// hostileConfig is the repository configuration a CLI plants: every key
// names a program (under .git/evil) that writes a marker when it runs.
// The values say what the program does after writing its marker.
var hostileConfig = [][2]string{
	{"core.fsmonitor", "fail"},
	{"core.pager", "cat"},
	{"core.editor", "ok"},
	{"sequence.editor", "ok"},
	{"core.askPass", "ok"},
	{"core.sshCommand", "fail"},
	{"diff.external", "ok"},
	{"diff.evil.textconv", "catarg"},
	{"filter.evil.clean", "cat"},
	{"filter.evil.smudge", "cat"},
	{"credential.helper", "ok"},
	{"gpg.program", "fail"},
	{"remote.origin.uploadpack", "upload"},
	{"remote.origin.receivepack", "fail"},
	{"uploadpack.packObjectsHook", "fail"},
	{"merge.evil.driver", "ok"},
}

// plantScript is the shell script, run inside a kennel (as the CLI would),
// that turns the git repository at gitDir (work tree ws) into a hostile
// one whose planted code writes markers to hostDir. hostDir is not
// mounted in any kennel: a marker there means code ran on the host. Each
// program also leaves a marker under gitDir/kennel-markers, to show that
// a command did run (in the kennel).
func plantScript(ws, gitDir, hostDir string, hooksPath bool) string {
	var b strings.Builder
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	fmt.Fprintf(&b, "set -e\nevil=%s/evil\nmkdir -p \"$evil\" %s/hooks\n", q(gitDir), q(gitDir))
	mk := func(path, name, then string) {
		body := fmt.Sprintf("#!/bin/sh\ntouch %s 2>/dev/null\nmkdir -p %s 2>/dev/null && touch %s 2>/dev/null\n",
			q(hostDir+"/"+name), q(gitDir+"/kennel-markers"), q(gitDir+"/kennel-markers/"+name))
		switch then {
		case "cat":
			body += "exec cat\n"
		case "catarg":
			body += "exec cat \"$1\"\n"
		case "upload":
			body += "exec git-upload-pack \"$@\"\n"
		case "fail":
			body += "exit 1\n"
		default:
			body += "exit 0\n"
		}
		fmt.Fprintf(&b, "cat > %s <<'EOF'\n%sEOF\nchmod +x %s\n", q(path), body, q(path))
	}
	hooks := gitDir + "/hooks"
	if hooksPath {
		hooks = gitDir + "/evil/hooks"
		fmt.Fprintf(&b, "mkdir -p %s\n", q(hooks))
	}
	for _, h := range hostileHooks {
		mk(hooks+"/"+h, "hook-"+h, "ok")
	}
	git := "git --git-dir=" + q(gitDir) + " --work-tree=" + q(ws) + " -c safe.directory=*"
	for _, kv := range hostileConfig {
		name := strings.ReplaceAll(kv[0], ".", "-")
		mk(gitDir+"/evil/"+name, name, kv[1])
		val := gitDir + "/evil/" + name
		if kv[0] == "credential.helper" {
			val = "!" + val
		}
		fmt.Fprintf(&b, "%s config %s %s\n", git, q(kv[0]), q(val))
	}
	if hooksPath {
		fmt.Fprintf(&b, "%s config core.hooksPath %s\n", git, q(hooks))
	}
	fmt.Fprintf(&b, "%s config commit.gpgsign true\n", git)
	fmt.Fprintf(&b, "%s config remote.origin.url %s\n", git, q(ws))
	fmt.Fprintf(&b, "%s config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'\n", git)
	fmt.Fprintf(&b, "%s config branch.main.remote origin\n%s config branch.main.merge refs/heads/main\n", git, git)
	fmt.Fprintf(&b, "%s update-ref refs/remotes/origin/main HEAD\n", git)
	fmt.Fprintf(&b, "printf '* filter=evil diff=evil merge=evil\\n' > %s/.gitattributes\n", q(ws))
	return b.String()
}

// inKennel runs a shell script as the kennel's user in a container of the
// kennel image with only dir mounted (at its own path), as a coding CLI
// would run it.
func (w *world) inKennel(dir, script string) {
	w.t.Helper()
	uid, gid := kennelUser()
	cmd := exec.Command("docker", "run", "--rm", "--user", fmt.Sprintf("%d:%d", uid, gid),
		"--mount", "type=bind,source="+dir+",target="+dir, "--entrypoint", "/bin/sh",
		harnessImage(w.t), "-c", script)
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("in the kennel: %v\n%s", err, out)
	}
}

// markers lists the files in dir.
func markers(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// hostGit runs git on the host as the test does (not as fetch does).
func hostGit(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	_ = cmd.Run() // the planted programs make some commands fail; the markers are what counts
}

// TestJourneyHostileWorkspace: a coding CLI turns its workspace's git
// repository hostile (hooks, configuration that names programs, filter
// drivers in .gitattributes, a .git that is a symlink or a file pointing
// out of the workspace). Fetch then runs tasks there, lists and inspects
// the workspaces, watches the upstream and discards a task's worktree.
// None of the planted code may run on the host: every planted program
// writes a marker into a host directory that no kennel mounts.
func TestJourneyHostileWorkspace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "hostile", "linked", "gitfile")
	w.env["FETCH_GIT_INTERVAL"] = "10s"
	host := t.TempDir()
	if err := os.Chmod(host, 0o777); err != nil { // fetch's git (as the kennel's user) must be able to write a marker
		t.Fatal(err)
	}
	ws := w.workspacePath("hostile")
	w.inKennel(ws, plantScript(ws, ws+"/.git", host, false))

	// A .git symlink and a .git file, planted in the kennel, pointing to
	// repositories outside the workspace (hostile ones, with core.hooksPath).
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"linked", "gitfile"} {
		p := w.workspacePath(name)
		gitDir := filepath.Join(elsewhere, name+".git")
		if err := os.Rename(filepath.Join(p, ".git"), gitDir); err != nil {
			t.Fatal(err)
		}
		// Planted on the host: the repositories are out of every kennel's reach.
		if out, err := exec.Command("/bin/sh", "-c", plantScript(p, gitDir, host, true)).CombinedOutput(); err != nil {
			t.Fatalf("plant %s: %v\n%s", name, err, out)
		}
		exec.Command("chown", "-R", "10001:10001", gitDir).Run()
		link := fmt.Sprintf("ln -s '%s' '%s/.git'", gitDir, p)
		if name == "gitfile" {
			link = fmt.Sprintf("printf 'gitdir: %s\\n' > '%s/.git'", gitDir, p)
		}
		w.inKennel(p, link)
	}

	// The test's sensitivity: git on the host, run the way git usually is,
	// on a copy of the hostile repository does run the planted code.
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", ws, cp).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(cp, "new.txt"), []byte("x\n"), 0o644)
	hostGit(t, cp, "status")
	hostGit(t, cp, "add", "-A")
	hostGit(t, cp, "commit", "--no-gpg-sign", "-m", "x")
	hostGit(t, cp, "diff", "HEAD~1", "HEAD")
	hostGit(t, cp, "fetch", "--quiet")
	hostGit(t, w.workspacePath("linked"), "status")
	got := markers(t, host)
	for _, want := range []string{"core-fsmonitor", "filter-evil-clean", "hook-pre-commit", "hook-post-commit", "diff-external", "remote-origin-uploadpack"} {
		if !slices.Contains(got, want) {
			t.Fatalf("the planted %s did not run under host git (markers %q): the test cannot see what it looks for", want, got)
		}
	}
	for _, m := range got {
		os.Remove(filepath.Join(host, m))
	}
	os.RemoveAll(cp)
	os.RemoveAll(filepath.Join(ws, ".git", "kennel-markers")) // the copy's programs are the workspace's

	// Now fetch: a complete task, workspace list and status, the watcher's
	// upstream check, tasks on the .git symlink and file, a discard.
	w.start()
	m, status := w.startTask(ownerID, "add a note to the hostile workspace", "add a note [file:note.txt]", "hostile")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`Task `+id+` (succeeded|failed|needs attention|was cancelled)`), "the task's result")

	w.llm.Script(testkit.Use(
		testkit.Call{ID: "l1", Name: "workspace_list", Arguments: "{}"},
		testkit.Call{ID: "s1", Name: "workspace_status", Arguments: `{"workspace":"hostile"}`},
		testkit.Call{ID: "s2", Name: "workspace_status", Arguments: `{"workspace":"linked"}`},
		testkit.Call{ID: "s3", Name: "workspace_status", Arguments: `{"workspace":"gitfile"}`},
	), testkit.Say("Listed them."))
	m = w.send(ownerID, "list the workspaces and show the status of hostile, linked and gitfile")
	w.await(m, regexp.MustCompile(`^Listed them\.`), "the agent's answer")

	m = w.send(ownerID, "/watch on hostile")
	w.await(m, regexp.MustCompile(`(?i)watch`), "the watch reply")
	checked := filepath.Join(ws, ".git", "kennel-markers", "remote-origin-uploadpack")
	w.wait(20*time.Second, func() bool {
		_, inKennel := os.Stat(checked)
		return inKennel == nil || len(markers(t, host)) > 0
	})

	for _, name := range []string{"linked", "gitfile"} {
		cmd := exec.Command(fetchBinary(t), "task", "run", "--wait", "--workspace", name, "touch a file [file:x.txt]")
		cmd.Env = w.environ()
		out, _ := cmd.CombinedOutput()
		t.Logf("task on %s: %s", name, out)
	}
	cmd := exec.Command(fetchBinary(t), "task", "discard", id)
	cmd.Env = w.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("discard %s: %v\n%s", id, err, out)
	}

	if got := markers(t, host); len(got) > 0 {
		t.Errorf("code planted in the workspace ran on the host: %q", got)
	}
	if _, err := os.Stat(checked); err != nil {
		t.Errorf("the watcher never fetched the upstream (in the kennel): %v", err)
	}
}
