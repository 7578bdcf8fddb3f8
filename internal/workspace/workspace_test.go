package workspace_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
	"github.com/google/go-cmp/cmp"
)

// testKennel is the kennel the registries of these tests run git in (the
// kennel test image), one per test process; every test removes the
// containers of its workspaces.
var (
	kennelOnce sync.Once
	testKennel *kennel.Kennel
)

// newRegistry is a registry over a new root, running git in real kennels.
// The kennel's user must own the workspaces, so it needs root (RunAs).
func newRegistry(t testing.TB) *workspace.Registry {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the kennel's user must own the workspaces: needs root")
	}
	testkit.RequireDocker(t)
	img := testkit.KennelImage(t)
	kennelOnce.Do(func() {
		docker, err := kennel.NewDockerClient("")
		if err != nil {
			panic(err)
		}
		sharedDocker = docker
		k, err := kennel.New(docker, kennel.Config{Image: img, Instance: "workspace-test-" + strconv.Itoa(os.Getpid())}, nil)
		if err != nil {
			panic(err)
		}
		testKennel = k
	})
	dir := t.TempDir()
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	root := filepath.Join(dir, "workspaces")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if err := testKennel.Remove(ctx, filepath.Join(root, e.Name())); err != nil {
				t.Errorf("remove kennel: %v", err)
			}
		}
	})
	return workspace.New(root, slog.New(slog.NewTextHandler(io.Discard, nil))).RunAs(10001, 10001).InKennel(testKennel)
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"demo", true},
		{"my-app_2.0", true},
		{"_x", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{".hidden", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/../../x", false},
		{"/etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"a b", false},
		{"naïve", false},
		{"a\x00b", false},
	} {
		err := workspace.ValidateName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v; want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, workspace.ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v; want ErrInvalidName", tc.name, err)
		}
	}
}

func TestBadNamesTouchNothing(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	for _, name := range []string{"../x", "/tmp/x", "a/../../x", ".git", ""} {
		if _, err := r.Create(ctx, name, ""); !errors.Is(err, workspace.ErrInvalidName) {
			t.Errorf("Create(%q) = %v; want ErrInvalidName", name, err)
		}
		if _, err := r.Clone(ctx, name, "https://example.com/x.git"); !errors.Is(err, workspace.ErrInvalidName) {
			t.Errorf("Clone(%q) = %v; want ErrInvalidName", name, err)
		}
		if err := r.Delete(ctx, name); !errors.Is(err, workspace.ErrInvalidName) {
			t.Errorf("Delete(%q) = %v; want ErrInvalidName", name, err)
		}
		if _, err := r.Path(name); !errors.Is(err, workspace.ErrInvalidName) {
			t.Errorf("Path(%q) = %v; want ErrInvalidName", name, err)
		}
	}
	if _, err := os.Stat(r.Root()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("root exists after refused calls: %v", err)
	}
	if _, err := r.Path("nope"); !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("Path(nope) = %v; want ErrNotFound", err)
	}
}

func TestCreateListStatusDelete(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	info, err := r.Create(ctx, "api", "go")
	if err != nil {
		t.Fatal(err)
	}
	if info.ProjectType != "go" || info.Branch != "main" || info.Dirty {
		t.Fatalf("created = %+v", info)
	}
	if _, err := r.Create(ctx, "api", ""); !errors.Is(err, workspace.ErrExists) {
		t.Fatalf("create twice: %v; want ErrExists", err)
	}
	if _, err := r.Create(ctx, "web", "cobol"); !errors.Is(err, workspace.ErrUnknownTemplate) {
		t.Fatalf("unknown template: %v", err)
	}
	if _, err := r.Create(ctx, "notes", ""); err != nil {
		t.Fatal(err)
	}
	// Something under the root that is not a workspace is not listed.
	os.WriteFile(filepath.Join(r.Root(), "stray.txt"), nil, 0o644)
	os.Mkdir(filepath.Join(r.Root(), ".hidden"), 0o755)

	dir := info.Path
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n// changed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new file.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("s"), 0o644)
	gitIn(t, dir, "add", "staged.txt")

	// No kennel runs yet, and List starts none: the branch comes from
	// HEAD, the changes are not read.
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	if diff := cmp.Diff([]string{"api", "notes"}, names); diff != "" {
		t.Fatalf("list (-want +got):\n%s", diff)
	}
	for _, i := range list {
		if !i.Asleep || i.Branch != "main" || i.Dirty || i.Problem != "" {
			t.Fatalf("listed before any kennel ran: %+v; want asleep on main", i)
		}
	}

	st, err := r.Status(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	// Status started api's kennel: List reads its changes now.
	list, err = r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !list[0].Dirty || list[0].Asleep || !list[1].Asleep {
		t.Fatalf("list after api's status: %+v; want api awake and dirty, notes asleep", list)
	}
	if st.Branch != "main" || st.LastCommit == nil || !strings.Contains(st.LastCommit.Subject, "Create workspace api") {
		t.Fatalf("status = %+v", st)
	}
	want := workspace.Status{Staged: []string{"staged.txt"}, Modified: []string{"main.go"}, Untracked: []string{"new file.txt"}}
	got := workspace.Status{Staged: st.Staged, Modified: st.Modified, Untracked: st.Untracked}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("status files (-want +got):\n%s", diff)
	}

	if err := r.Delete(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Path("notes"); !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := r.Delete(ctx, "notes"); !errors.Is(err, workspace.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestClone(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	// The source lives outside r's workspaces: a repository inside them
	// is written by a kennel, and a clone runs git on the host.
	src, err := newRegistry(t).Create(ctx, "origin", "python")
	if err != nil {
		t.Fatal(err)
	}
	inside, err := r.Create(ctx, "inside", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Clone(ctx, "copy", "file://"+inside.Path); !errors.Is(err, workspace.ErrInvalidURL) {
		t.Fatalf("clone of another workspace = %v; want ErrInvalidURL", err)
	}
	info, err := r.Clone(ctx, "copy", "file://"+src.Path)
	if err != nil {
		t.Fatal(err)
	}
	if info.ProjectType != "python" || info.Branch != "main" {
		t.Fatalf("clone = %+v", info)
	}
	st, err := r.Status(ctx, "copy")
	if err != nil || st.Upstream != "origin/main" || st.Ahead != 0 || st.Behind != 0 {
		t.Fatalf("clone status = %+v, %v", st, err)
	}

	for _, url := range []string{
		"ext::sh -c touch% /tmp/pwned",
		"--upload-pack=touch /tmp/pwned",
		"http://example.com/x.git",
		"ftp://example.com/x.git",
		"/abs/path",
		"../relative",
		"https://",
		"",
	} {
		if _, err := r.Clone(ctx, "bad", url); !errors.Is(err, workspace.ErrInvalidURL) {
			t.Errorf("Clone(%q) = %v; want ErrInvalidURL", url, err)
		}
	}
	// A clone that fails leaves nothing behind.
	if _, err := r.Clone(ctx, "missing", "file://"+filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("clone of a missing repository succeeded")
	}
	// A repository without a commit is refused, saying so: its tasks
	// would have nothing to branch from.
	empty := t.TempDir()
	if out, err := exec.Command("git", "init", "--quiet", empty).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if _, err := r.Copy(ctx, "empty", empty); !errors.Is(err, workspace.ErrNoCommit) || !strings.Contains(err.Error(), "commit something there first") {
		t.Errorf("copy of a repository without a commit = %v; want ErrNoCommit", err)
	}
	entries, _ := os.ReadDir(r.Root())
	for _, e := range entries {
		if e.Name() != "inside" && e.Name() != "copy" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestWorktreeLifecycle(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	ws, err := r.Create(ctx, "app", "")
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, "app", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if wt.Branch != "fetch/t1" || wt.BaseBranch != "main" || !strings.HasPrefix(wt.Path, ws.Path+"/") {
		t.Fatalf("worktree = %+v", wt)
	}
	// The worktree does not make the workspace dirty.
	if st, _ := r.Status(ctx, "app"); !st.Clean() {
		t.Fatalf("workspace dirty after adding a worktree: %+v", st)
	}
	os.WriteFile(filepath.Join(wt.Path, "README.md"), []byte("# New workspace\n\nCreated by Fetch.\nmore\n"), 0o644)
	os.WriteFile(filepath.Join(wt.Path, "added.txt"), []byte("a\nb\n"), 0o644)
	committed, err := r.Commit(ctx, wt, "fetch: task t1")
	if err != nil || !committed {
		t.Fatalf("commit: %v %v", committed, err)
	}
	if committed, err := r.Commit(ctx, wt, "again"); err != nil || committed {
		t.Fatalf("second commit: %v %v; want nothing to commit", committed, err)
	}
	d, err := r.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []workspace.FileStat{{Path: "README.md", Added: 1}, {Path: "added.txt", Added: 2}}
	if diff := cmp.Diff(wantFiles, d.Files); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	if len(d.Commits) != 1 || d.Commits[0].Subject != "fetch: task t1" || !strings.Contains(d.Patch, "+more") {
		t.Fatalf("diff = %+v", d)
	}

	// Not merged, not pushed: removal refused and nothing lost.
	if err := r.RemoveWorktree(ctx, wt, false); !errors.Is(err, workspace.ErrUnsafe) {
		t.Fatalf("remove unmerged: %v; want ErrUnsafe", err)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "added.txt")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws.Path, "merge", "--quiet", "--ff-only", wt.Branch)
	if err := r.RemoveWorktree(ctx, wt, false); err != nil {
		t.Fatalf("remove merged: %v", err)
	}
	if _, err := os.Stat(wt.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree still there: %v", err)
	}

	wt2, err := r.AddWorktree(ctx, "app", "t2")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt2.Path, "x"), []byte("x"), 0o644)
	r.Commit(ctx, wt2, "x")
	if err := r.RemoveWorktree(ctx, wt2, true); err != nil {
		t.Fatalf("discard: %v", err)
	}
	if out := gitIn(t, ws.Path, "branch", "--list", "fetch/t2"); out != "" {
		t.Fatalf("discarded branch still there: %q", out)
	}
	if err := r.RemoveWorktree(ctx, wt2, true); err != nil {
		t.Fatalf("discard twice: %v", err)
	}
}

func TestAddWorktreeSaysWhatFailed(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	if _, err := r.Create(ctx, "app", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddWorktree(ctx, "app", "t1"); err != nil {
		t.Fatal(err)
	}
	// The base was read; the branch is taken.
	_, err := r.AddWorktree(ctx, "app", "t1")
	if err == nil || !strings.Contains(err.Error(), "already exists") || strings.Contains(err.Error(), "no commit") {
		t.Errorf("a second worktree for t1: %v; want git's refusal, not that there is no commit", err)
	}
	// A kennel image whose shim has no worktree command.
	plan, err := r.PlanWorktree(ctx, "app", "t2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = plan.Read([]byte(`{"steps":[{"exit":2,"stdout":"","stderr":"fetch-shim: unknown command \"worktree\"\nusage: ..."}]}`))
	if !errors.Is(err, gitrun.ErrOldShim) {
		t.Errorf("an old shim's answer: %v; want ErrOldShim", err)
	}
}

func TestPlanRecordCommitsAndBundles(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	if _, err := r.Create(ctx, "app", ""); err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, "app", "t1")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing done: nothing committed, the branch at its base, no bundle.
	b, err := r.Bundle(ctx, r.PlanRecord(wt, wt.Base, "fetch: task t1", nil))
	if err != nil || b.Committed || b.Tip != wt.Base || b.Bundle != nil {
		t.Fatalf("record of nothing: %+v, %v", b, err)
	}
	// The message is committed as written, "${base}" and all.
	os.WriteFile(filepath.Join(wt.Path, "added.txt"), []byte("a\n"), 0o644)
	msg := "fetch: task t1\n\nuse ${base} and ${HOME} as they are"
	b, err = r.Bundle(ctx, r.PlanRecord(wt, wt.Base, msg, nil))
	if err != nil || !b.Committed || b.Tip == wt.Base {
		t.Fatalf("record: %+v, %v", b, err)
	}
	if got := gitIn(t, wt.Path, "log", "-1", "--format=%B"); got != msg {
		t.Errorf("commit message %q, want %q", got, msg)
	}
	if head := gitIn(t, wt.Path, "rev-parse", "HEAD"); head != b.Tip {
		t.Errorf("tip %s, HEAD %s", b.Tip, head)
	}
	bundle := filepath.Join(t.TempDir(), "b")
	os.WriteFile(bundle, b.Bundle, 0o600)
	if heads := gitIn(t, wt.Path, "bundle", "list-heads", bundle); heads != b.Tip+" refs/heads/fetch/t1" {
		t.Errorf("bundle heads %q", heads)
	}
	// A base that is not a commit: the bundle fails, the rest is read.
	b, err = r.Bundle(ctx, r.PlanRecord(wt, "nonesuch", "again", nil))
	if err != nil || b.Committed || b.Tip == "" || b.Bundle != nil {
		t.Fatalf("record with a bad base: %+v, %v", b, err)
	}
}

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRunAsOwnsEverything checks that, as root with RunAs, workspaces,
// worktrees and the commits made in them belong to the kennel's user.
func TestRunAsOwnsEverything(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	r := newRegistry(t)
	ctx := t.Context()
	ws, err := r.Create(ctx, "app", "go")
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, "app", "t1")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt.Path, "n.txt"), []byte("n\n"), 0o644)
	os.Chown(filepath.Join(wt.Path, "n.txt"), 10001, 10001)
	if _, err := r.Commit(ctx, wt, "n"); err != nil {
		t.Fatal(err)
	}
	r2 := newRegistry(t)
	if _, err := r2.Clone(ctx, "copy", "file://"+ws.Path); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{ws.Path, filepath.Join(r2.Root(), "copy")} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			if st.Uid != 10001 || st.Gid != 10001 {
				t.Errorf("%s belongs to %d:%d; want 10001:10001", p, st.Uid, st.Gid)
			}
			return nil
		})
	}
}

func TestSelectPersists(t *testing.T) {
	r := newRegistry(t)
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.EnsureConversation(ctx, "c1", "term", "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Create(ctx, "api", ""); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../api", "nope"} {
		if _, err := r.Select(ctx, db, "c1", bad); err == nil {
			t.Fatalf("Select(%q) succeeded", bad)
		}
	}
	if c, _ := db.Conversation(ctx, "c1"); c.Workspace != "" {
		t.Fatalf("a refused selection was recorded: %q", c.Workspace)
	}
	if _, err := r.Select(ctx, db, "c1", "api"); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.Conversation(ctx, "c1"); c.Workspace != "api" {
		t.Fatalf("selection = %q", c.Workspace)
	}
}

// TestWorkspacesInsideClosedDataDir: as root, with the workspaces folder
// inside a data directory that nobody else may enter (0700, as Fetch makes
// it), workspaces are still created and cloned (also from a repository
// that belongs to root), belong to the kennel's user, and tasks branch
// from them in the kennel.
func TestWorkspacesInsideClosedDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	open := newRegistry(t)
	data := filepath.Join(filepath.Dir(open.Root()), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(data, "workspaces")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			testKennel.Remove(ctx, filepath.Join(root, e.Name()))
		}
	})
	r := workspace.New(root, slog.New(slog.DiscardHandler)).RunAs(10001, 10001).InKennel(testKennel)
	ctx := t.Context()
	ws, err := r.Create(ctx, "app", "go")
	if err != nil {
		t.Fatalf("create in a closed data directory: %v", err)
	}
	if ws.Branch != "main" {
		t.Errorf("branch %q; want main", ws.Branch)
	}
	if _, err := r.AddWorktree(ctx, "app", "t1"); err != nil {
		t.Fatalf("a task's worktree: %v", err)
	}
	// A repository of root's, in a folder only root may enter.
	src := filepath.Join(data, "src")
	os.Mkdir(src, 0o700)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cl, err := r.Clone(ctx, "copy", "file://"+src)
	if err != nil {
		t.Fatalf("clone a root-owned repository: %v", err)
	}
	if cl.Branch != "main" {
		t.Errorf("clone branch %q; want main", cl.Branch)
	}
	for _, p := range []string{ws.Path, cl.Path} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(p, ".git", "HEAD"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 10001 {
			t.Errorf("%s belongs to uid %d; want the kennel's 10001", p, st.Uid)
		}
	}
	if got, err := r.Get(ctx, "copy"); err != nil || got.Problem != "" {
		t.Errorf("the clone in its kennel: %+v, %v", got, err)
	}
}

// TestProjectTypeIgnoresLinks: the project type comes from marker files of
// the workspace's own; a marker that is a symlink (the kennel writes the
// tree) does not count, and an invalid name has none.
func TestProjectTypeIgnoresLinks(t *testing.T) {
	root := t.TempDir()
	r := workspace.New(root, slog.New(slog.DiscardHandler))
	for name, setup := range map[string]func(dir string) error{
		"plain": func(dir string) error { return os.WriteFile(filepath.Join(dir, "Cargo.toml"), nil, 0o644) },
		"link":  func(dir string) error { return os.Symlink("/etc/hostname", filepath.Join(dir, "go.mod")) },
	} {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := setup(dir); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"plain": "rust", "link": "", "../etc": "", "missing": ""} {
		if got := r.ProjectType(name); got != want {
			t.Errorf("ProjectType(%q) = %q; want %q", name, got, want)
		}
	}
}
