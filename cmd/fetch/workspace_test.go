package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceCommands drives fetch workspace add, remove and their
// refusals; list and show, which read git in the kennel, are in the
// journeys.
func TestWorkspaceCommands(t *testing.T) {
	root := t.TempDir()
	// The kennel's user builds new workspaces when the tests run as root.
	for d := root; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	vars := map[string]string{"FETCH_DATA_DIR": filepath.Join(root, "data"), "FETCH_WORKSPACES": filepath.Join(root, "ws")}
	src := filepath.Join(root, "src")
	for _, args := range [][]string{{"init", "-q", "-b", "trunk", src}, {"-C", src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	notGit := filepath.Join(root, "plain")
	os.Mkdir(notGit, 0o755)
	noCommit := filepath.Join(root, "nocommit")
	if out, err := exec.Command("git", "init", "-q", noCommit).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout (or stderr when the exit is not 0)
	}{
		{[]string{"workspace"}, exitUsage, "a subcommand is required"},
		{[]string{"workspace", "frob"}, exitUsage, `fetch workspace: unknown subcommand "frob"`},
		{[]string{"workspace", "add"}, exitUsage, "fetch workspace add: takes 1 or 2 argument(s), got 0"},
		{[]string{"workspace", "add", "--bogus", "x"}, exitUsage, "fetch workspace add: flag provided but not defined: -bogus"},
		{[]string{"workspace", "add", "../x"}, exitFailed, "it is a name, not a path"},
		{[]string{"workspace", "add", "x", filepath.Join(root, "nope")}, exitFailed, "does not exist"},
		{[]string{"workspace", "add", "x", notGit}, exitFailed, "is not a git repository"},
		{[]string{"workspace", "add", "x", noCommit}, exitFailed, "the repository has no commit yet: commit something there first"},
		{[]string{"workspace", "add", "--template", "nope", "x"}, exitFailed, "unknown template"},
		{[]string{"workspace", "clone", "ftp://example.com/x.git"}, exitFailed, `scheme "ftp" is not allowed`},
		{[]string{"workspace", "remove", "--template", "go", "x"}, exitUsage, "--template does not apply to remove"},
		{[]string{"workspace", "show", "nosuch"}, exitFailed, "no such workspace in " + vars["FETCH_WORKSPACES"]},
		{[]string{"workspace", "add", "demo"}, exitOK, "Workspace demo: new repository, in " + filepath.Join(vars["FETCH_WORKSPACES"], "demo")},
		{[]string{"workspace", "add", "demo"}, exitFailed, "workspace exists already"},
		{[]string{"workspace", "add", "api", src}, exitOK, "Workspace api: copied from " + src},
		// Not a terminal and no --yes: nothing is removed.
		{[]string{"workspace", "remove", "demo"}, exitUsage, "confirm with --yes"},
		{[]string{"workspace", "remove", "--yes", "demo"}, exitOK, "Removed workspace demo."},
		{[]string{"workspace", "remove", "--yes", "demo"}, exitFailed, "no such workspace"},
	} {
		code, out, errs := runFetch(t, vars, "", tc.args...)
		got := out
		if code != exitOK {
			got = errs
		}
		if code != tc.code || !strings.Contains(got, tc.out) {
			t.Errorf("fetch %v: exit %d\nstdout %s\nstderr %s\nwant exit %d and %q", tc.args, code, out, errs, tc.code, tc.out)
		}
	}
	if _, err := os.Stat(filepath.Join(vars["FETCH_WORKSPACES"], "api", ".git")); err != nil {
		t.Errorf("the copy of %s has no repository: %v", src, err)
	}
	if _, err := os.Stat(filepath.Join(vars["FETCH_WORKSPACES"], "x")); err == nil {
		t.Error("a refused add left a workspace x")
	}
	// A missing workspace says where Fetch looked and how to add one.
	_, _, errs := runFetch(t, vars, "", "task", "run", "--workspace", "nosuch", "goal")
	for _, want := range []string{"fetch task run: ", "no such workspace in " + vars["FETCH_WORKSPACES"], "fetch workspace add NAME [PATH]", "fetch workspace clone URL"} {
		if !strings.Contains(errs, want) {
			t.Errorf("fetch task run --workspace nosuch: stderr %q; want %q", errs, want)
		}
	}
}
