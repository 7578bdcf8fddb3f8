package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGitConfig(t *testing.T) {
	conf := "# comment\n[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"/tmp/x.sh\" ; why\n" +
		"[Core] Pager = less\n" +
		"[diff \"pdf\"]\n\ttextconv = pdftotext \\\n  -layout\n" +
		"[filter.lfs]\n\tsmudge = x\n" +
		"[alias]\n\tst = status\n\tpwn = \"!sh -c 'id'\"\n" +
		"[includeIf \"gitdir:/x/\"]\n\tpath = /tmp/evil\n" +
		"[remote \"origin\"]\n\turl = https://example.com/r.git\n\tuploadpack = /tmp/up\n" +
		"[core]\n\tbare\n"
	entries, bad := parseGitConfig(conf)
	if len(bad) != 0 {
		t.Fatalf("bad lines %v", bad)
	}
	var names []string
	for _, e := range entries {
		if runsProgram(e) != "" {
			names = append(names, e.name())
		}
	}
	want := []string{"core.fsmonitor", "core.pager", "diff.pdf.textconv", "filter.lfs.smudge", "alias.pwn", "includeif.gitdir:/x/.path", "remote.origin.uploadpack"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("keys that run programs (-want +got):\n%s", diff)
	}
}

func TestParseGitConfigRefusesWhatItCannotRead(t *testing.T) {
	for _, conf := range []string{
		"fsmonitor = x\n",                  // no section
		"[core\n\tfsmonitor = x\n",         // unclosed header
		"[core]\n\tfsmonitor = \"x\n",      // unclosed quote
		"[core]\n\t9key = x\n",             // not a key
		"[core]\n\tfsmonitor = \\q\n",      // unknown escape
		"[sec \"sub\" x]\n\tfsmonitor = 1", // junk in the header
	} {
		if _, bad := parseGitConfig(conf); len(bad) == 0 {
			t.Errorf("%q read without complaint", conf)
		}
	}
}

// plant makes a workspace whose .git holds a hook, samples, and config.
func plant(t *testing.T, config string, hooks map[string]os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, mode := range hooks {
		if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", name), []byte("#!/bin/sh\ntouch /tmp/pwned\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPlantedInGit(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		dir := plant(t, "[core]\n\tbare = false\n\tfsmonitor = false\n[remote \"origin\"]\n\turl = x\n", map[string]os.FileMode{"pre-commit.sample": 0o755})
		if found, err := PlantedInGit(dir); err != nil || len(found) != 0 {
			t.Fatalf("PlantedInGit = %v, %v; want nothing", found, err)
		}
	})
	t.Run("planted", func(t *testing.T) {
		dir := plant(t, "[core]\n\tfsmonitor = /tmp/fsm\n\thooksPath = /tmp/hooks\n[include]\n\tpath = ../evil\n",
			map[string]os.FileMode{"pre-commit": 0o755, "post-checkout": 0o644, "update.sample": 0o755})
		if err := os.Symlink("/bin/sh", filepath.Join(dir, ".git", "hooks", "post-merge")); err != nil {
			t.Fatal(err)
		}
		found, err := PlantedInGit(dir)
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(found, "\n")
		for _, want := range []string{"hook pre-commit", "hook post-merge (a symbolic link)", "core.fsmonitor", "core.hookspath", "include.path"} {
			if !strings.Contains(joined, want) {
				t.Errorf("findings lack %q:\n%s", want, joined)
			}
		}
		for _, never := range []string{"post-checkout", "update", "/tmp/fsm", "../evil"} {
			if strings.Contains(joined, never) {
				t.Errorf("findings name %q (not executable, a sample, or a value):\n%s", never, joined)
			}
		}
	})
	t.Run(".git elsewhere", func(t *testing.T) {
		outside := t.TempDir()
		dir := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		found, _ := PlantedInGit(dir)
		if len(found) != 1 || !strings.Contains(found[0], "symbolic link") {
			t.Errorf("symlinked .git: %v", found)
		}
		dir2 := t.TempDir()
		os.WriteFile(filepath.Join(dir2, ".git"), []byte("gitdir: /elsewhere/.git\n"), 0o644)
		found, _ = PlantedInGit(dir2)
		if len(found) != 1 || !strings.Contains(found[0], "is a file") {
			t.Errorf(".git file: %v", found)
		}
	})
	t.Run("config is a symlink out", func(t *testing.T) {
		dir := plant(t, "", nil)
		outside := filepath.Join(t.TempDir(), "config")
		os.WriteFile(outside, []byte("[core]\n\tfsmonitor = x\n"), 0o644)
		os.Remove(filepath.Join(dir, ".git", "config"))
		if err := os.Symlink(outside, filepath.Join(dir, ".git", "config")); err != nil {
			t.Fatal(err)
		}
		found, _ := PlantedInGit(dir)
		if !slices.ContainsFunc(found, func(s string) bool { return strings.Contains(s, "not a regular file") }) {
			t.Errorf("symlinked config: %v", found)
		}
	})
}

func TestWorkspaceGitChecks(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "clean", ".git"), 0o755)
	bad := plant(t, "[core]\n\tfsmonitor = /x\n", map[string]os.FileMode{"pre-push": 0o700})
	if err := os.Rename(bad, filepath.Join(root, "api")); err != nil {
		t.Fatal(err)
	}
	checks := WorkspaceGitChecks(root, "/data/repos")
	if len(checks) != 1 || checks[0].Status != Warn || checks[0].Name != "workspace api" ||
		!strings.Contains(checks[0].Detail, "hook pre-push") || !strings.Contains(checks[0].Detail, "core.fsmonitor") ||
		!strings.Contains(checks[0].Fix, "git fetch /data/repos/api.git fetch/ID") {
		t.Fatalf("checks %+v", checks)
	}
	os.RemoveAll(filepath.Join(root, "api"))
	if checks := WorkspaceGitChecks(root, "/data/repos"); len(checks) != 1 || checks[0].Status != OK {
		t.Fatalf("clean: %+v", checks)
	}
}
