package watch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/watch"
	"github.com/fetch-dev/fetch/kennel"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const conv = "dm:100"

// outbox hands notifications to a Recorder, as the conversation runtime
// hands them to a channel.
type outbox struct{ *testkit.Recorder }

func (o outbox) Notify(ctx context.Context, id string, r chat.Reply) error { return o.Send(ctx, id, r) }

type rig struct {
	root string
	db   *store.DB
	rec  *testkit.Recorder
	m    *watch.Manager
}

func start(t testing.TB, root, dbPath string, cfg watch.Config) *rig {
	t.Helper()
	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureConversation(context.Background(), conv, "test", "100"); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Root, cfg.Logger = db, root, slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &rig{root: root, db: db, rec: testkit.NewRecorder(), m: watch.New(cfg)}
	if err := r.m.Open(context.Background(), outbox{r.rec}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) stop() {
	r.m.Close(context.Background())
	r.db.Close()
}

func (r *rig) apply(t testing.TB, text string) string {
	t.Helper()
	res, ok := instincts.New().Match(text, instincts.State{})
	if !ok || res.Effect == instincts.None {
		t.Fatalf("%q → %+v", text, res)
	}
	reply, err := r.m.Apply(t.Context(), conv, "100", res)
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBurstIsOneMessage: a burst of changes — many files created, one
// changed, one removed, a new directory, and noise under .git, vendor,
// build and node_modules — is reported as one message; the next burst
// gets a message of its own.
func TestBurstIsOneMessage(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "api")
	write(t, filepath.Join(ws, "README.md"), "hello\n")
	write(t, filepath.Join(ws, "old.txt"), "bye\n")
	for _, d := range []string{".git/objects", "vendor/x", "build", "node_modules/y"} {
		write(t, filepath.Join(ws, d, "keep"), "")
	}
	r := start(t, root, filepath.Join(t.TempDir(), "fetch.db"), watch.Config{Debounce: time.Second})
	if reply := r.apply(t, "/watch on api"); !strings.HasPrefix(reply, "👀 Watching api") {
		t.Fatalf("watch on → %q", reply)
	}

	for i := range 25 {
		write(t, filepath.Join(ws, "src", fmt.Sprintf("f%02d.go", i)), "package src\n")
	}
	write(t, filepath.Join(ws, "README.md"), "hello again\n")
	if err := os.Remove(filepath.Join(ws, "old.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "tmp.txt"), "x")
	os.Remove(filepath.Join(ws, "tmp.txt")) // created and removed: nothing
	for _, noise := range []string{".git/objects/ab", "vendor/x/y.go", "build/out.o", "node_modules/y/z.js", "main.go.swp", "notes~"} {
		write(t, filepath.Join(ws, noise), "noise")
	}

	got := r.rec.WaitFor(t, 1)[0]
	want := "👀 api: 25 created, 1 changed, 1 removed\n" +
		"created: src/f00.go, src/f01.go, src/f02.go, src/f03.go, src/f04.go, src/f05.go, src/f06.go, src/f07.go, src/f08.go, src/f09.go … and 15 more\n" +
		"changed: README.md\n" +
		"removed: old.txt"
	if got.ConversationID != conv || got.Reply.Text != want {
		t.Fatalf("burst message:\n%s\nwant:\n%s", got.Reply.Text, want)
	}

	write(t, filepath.Join(ws, "src", "f00.go"), "package src // edited\n")
	second := r.rec.WaitFor(t, 2)[1].Reply.Text
	if second != "👀 api: 1 changed\nchanged: src/f00.go" {
		t.Fatalf("second burst = %q", second)
	}
}

// TestWatchPersistsAndStops: a watch survives a restart; /watch off ends
// it; unknown workspaces are refused and nothing is stored.
func TestWatchPersistsAndStops(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "web")
	write(t, filepath.Join(ws, "index.html"), "<p>")
	dbPath := filepath.Join(t.TempDir(), "fetch.db")
	cfg := watch.Config{Debounce: 100 * time.Millisecond}

	r := start(t, root, dbPath, cfg)
	if reply := r.apply(t, "/watch on nope"); reply != "There is no workspace nope. Nothing is watched." {
		t.Fatalf("unknown workspace → %q", reply)
	}
	r.apply(t, "/watch on web")
	if reply := r.apply(t, "/watch on web"); reply != "I'm already watching web." {
		t.Fatalf("second watch on → %q", reply)
	}
	r.stop()

	r2 := start(t, root, dbPath, cfg)
	if r2.m.Watching("web") != conv || r2.m.Watching("nope") != "" {
		t.Fatalf("after restart watching web → %q, nope → %q", r2.m.Watching("web"), r2.m.Watching("nope"))
	}
	write(t, filepath.Join(ws, "index.html"), "<p>hi")
	if got := r2.rec.WaitFor(t, 1)[0].Reply.Text; got != "👀 web: 1 changed\nchanged: index.html" {
		t.Fatalf("after restart: %q", got)
	}
	if reply := r2.apply(t, "/watch off web"); reply != "Stopped watching web." {
		t.Fatalf("watch off → %q", reply)
	}
	if reply := r2.apply(t, "/watch off web"); reply != "web is not being watched." {
		t.Fatalf("second watch off → %q", reply)
	}
	var n int
	r2.db.SQL().QueryRow("SELECT count(*) FROM watches").Scan(&n)
	if n != 0 || r2.m.Watching("web") != "" {
		t.Fatalf("after watch off: %d stored, watching %q", n, r2.m.Watching("web"))
	}
}

// git runs git for the test, failing it on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", "-c", "safe.directory=*"}, args...)...)
	// A global configuration trusting every owner: the workspace belongs
	// to the kennel's user, and -c does not reach a local push's
	// receive-pack.
	global := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(global, []byte("[safe]\n\tdirectory = *\n"), 0o644)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+global, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git not installed")
	}
}

// TestGitBehind: commits pushed to a (local, bare) remote by someone else
// are reported once per new upstream commit, after a fetch.
func TestGitBehind(t *testing.T) {
	needGit(t)
	if os.Geteuid() != 0 {
		t.Skip("the kennel's user must own the workspace: needs root")
	}
	docker := testkit.RequireDocker(t)
	k, err := kennel.New(docker, kennel.Config{Image: testkit.KennelImage(t), Instance: "watch-test-" + strconv.Itoa(os.Getpid())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := testkit.KennelWorkspace(t)
	ws := filepath.Join(root, "api")
	// The remote lives in the workspace: the kennel mounts nothing else.
	remote := filepath.Join(ws, ".git", "remote.git")
	other := filepath.Join(t.TempDir(), "other")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		k.Remove(ctx, ws)
	})
	git(t, root, "init", ws)
	git(t, root, "init", "--bare", remote)
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	git(t, ws, "add", ".")
	git(t, ws, "commit", "-m", "first")
	git(t, ws, "remote", "add", "origin", remote)
	git(t, ws, "push", "-u", "origin", "main")
	git(t, root, "clone", remote, other)
	for _, msg := range []string{"second", "third"} {
		write(t, filepath.Join(other, msg+".txt"), msg)
		git(t, other, "add", ".")
		git(t, other, "commit", "-m", msg)
	}
	git(t, other, "push", "origin", "main")
	chownTree(t, ws)

	r := start(t, root, filepath.Join(t.TempDir(), "fetch.db"), watch.Config{GitInterval: 50 * time.Millisecond, Debounce: time.Hour, Kennel: k})
	if reply := r.apply(t, "/watch on api"); !strings.Contains(reply, "falls behind upstream") {
		t.Fatalf("watch on → %q", reply)
	}
	if got := r.rec.WaitFor(t, 1)[0].Reply.Text; got != "⬇️ api: main is 2 commits behind origin/main (latest: third)." {
		t.Fatalf("git behind = %q", got)
	}
	write(t, filepath.Join(other, "fourth.txt"), "4")
	git(t, other, "add", ".")
	git(t, other, "commit", "-m", "fourth")
	git(t, other, "push", "origin", "main")
	got := r.rec.WaitFor(t, 2)
	if got[1].Reply.Text != "⬇️ api: main is 3 commits behind origin/main (latest: fourth)." {
		t.Fatalf("after another push = %q", got[1].Reply.Text)
	}
	for _, s := range r.rec.Texts()[2:] {
		t.Fatalf("reported again without a new upstream commit: %q", s)
	}
}

// chownTree gives dir to the kennel's user, who runs git there.
func chownTree(t testing.TB, dir string) {
	t.Helper()
	if out, err := exec.Command("chown", "-R", "10001:10001", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
}
