package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/mirror"
)

// The arguments of what Changes holds (the package doc's commands), with
// core.quotePath=false as gitrun runs git in the kennel.
var (
	diffArgs = []string{"-c", "core.quotePath=false", "diff", "--numstat", "-z", "--binary", "--patch", "--no-renames", "--no-ext-diff", "--no-textconv"}
	logArgs  = []string{"-c", "core.quotePath=false", "log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e"}
)

// source is a repository on the host that the test writes: its bundles
// stand for what crossed out of a kennel.
type source struct {
	t   testing.TB
	dir string
}

func newSource(t testing.TB) *source {
	t.Helper()
	s := &source{t: t, dir: t.TempDir()}
	s.git("init", "-q", "-b", "main", ".")
	s.write("a.txt", "one\ntwo\nthree\n")
	s.write("old.txt", "going\n")
	s.commit("first")
	return s
}

// git runs git in the source and returns its stdout as it is.
func (s *source) git(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Coder", "GIT_AUTHOR_EMAIL=coder@example.com",
		"GIT_COMMITTER_NAME=Coder", "GIT_COMMITTER_EMAIL=coder@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0200", "GIT_COMMITTER_DATE=1700000000 +0200",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("git %q: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

func (s *source) rev(rev string) string {
	s.t.Helper()
	return strings.TrimSpace(s.git("rev-parse", "--verify", rev))
}

func (s *source) write(name, content string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// commit commits everything in the tree and returns the commit.
func (s *source) commit(msg string) string {
	s.t.Helper()
	s.git("add", "-A")
	s.git("commit", "-q", "--allow-empty", "-m", msg)
	return s.rev("HEAD")
}

// bundle returns `git bundle create - ARGS`.
func (s *source) bundle(args ...string) []byte {
	s.t.Helper()
	return []byte(s.git(append([]string{"bundle", "create", "-q", "-"}, args...)...))
}

// withHeader returns bundle with its header replaced by lines (and the
// empty line that ends a header).
func withHeader(bundle []byte, lines ...string) []byte {
	_, pack, _ := bytes.Cut(bundle, []byte("\n\n"))
	return append([]byte(strings.Join(lines, "\n")+"\n\n"), pack...)
}

// hostMirror is a mirror whose kennel is never reached, its root and the
// repository of workspace "demo" in it.
type hostMirror struct {
	*mirror.Mirror
	root, dir string
}

func newHostMirror(t testing.TB) hostMirror {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repos")
	m, err := mirror.New(mirror.Config{Root: root, Kennel: nopKennel{}, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	return hostMirror{Mirror: m, root: root, dir: filepath.Join(root, "demo.git")}
}

// seed takes the source's main, whole, into the mirror.
func (h hostMirror) seed(t testing.TB, s *source) string {
	t.Helper()
	main := s.rev("main")
	if err := h.Take(context.Background(), "demo", "main", main, bytes.NewReader(s.bundle("main"))); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return main
}

// has tells whether the mirror has the object.
func (h hostMirror) has(id string) bool {
	cmd := exec.Command("git", "--git-dir="+h.dir, "cat-file", "-e", id)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent"}
	return cmd.Run() == nil
}

// state is the mirror's refs and the names of its object files: what a
// refused stage must leave as it was.
func (h hostMirror) state(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	if _, err := os.Stat(h.dir); err != nil {
		return "no mirror"
	}
	b.WriteString(hostGit(t, h.dir, "for-each-ref", "--format=%(refname) %(objectname)") + "\n")
	err := filepath.WalkDir(filepath.Join(h.dir, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b.WriteString(strings.TrimPrefix(p, h.dir) + "\n")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// quarantines lists the quarantine directories under Root/.tmp.
func (h hostMirror) quarantines(t testing.TB) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(h.root, ".tmp", "stage-*"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestStageLand: a thin bundle (its prerequisite the base the mirror
// has) is staged; Changes is what git prints in the source repository;
// nothing is in the mirror before Land, and everything after.
func TestStageLand(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)

	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("a.txt", "ONE\ntwo\nthree\n")
	s.write("ü ñ.txt", "unicode name\n")
	s.write("bin.dat", "\x00\x01binary\x00")
	if err := os.Remove(filepath.Join(s.dir, "old.txt")); err != nil {
		t.Fatal(err)
	}
	s.commit("first change\n\nwith a body")
	s.write("b.txt", "more\n")
	tip := s.commit("second change")
	newBlob := s.rev("HEAD:b.txt")

	st, ch, err := h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	want := mirror.Changes{
		Tip:  tip,
		Diff: s.git(append(slices.Clone(diffArgs), main, tip, "--")...),
		Log:  s.git(append(slices.Clone(logArgs), main+".."+tip, "--")...),
	}
	if !strings.Contains(want.Diff, "\x00\x00") || strings.Count(want.Log, "\x1e") != 2 {
		t.Fatalf("the source's diff or log is not what the test means: %q, %q", want.Diff, want.Log)
	}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if st.Tip() != tip {
		t.Errorf("staged tip %s, want %s", st.Tip(), tip)
	}

	// Staged, not landed: the mirror has neither the ref nor the objects.
	if h.has("refs/heads/fetch/t1") || h.has(tip) || h.has(newBlob) {
		t.Errorf("the mirror has the branch or its objects before Land")
	}
	if q := h.quarantines(t); len(q) != 1 {
		t.Errorf("quarantines: %q, want one", q)
	}

	if err := st.Land(ctx); err != nil {
		t.Fatalf("land: %v", err)
	}
	if got := hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t1"); got != tip {
		t.Errorf("fetch/t1 at %s after Land, want %s", got, tip)
	}
	if !h.has(newBlob) {
		t.Errorf("the mirror lacks the new blob after Land")
	}
	hostGit(t, h.dir, "fsck", "--strict", "--no-dangling")
	if q := h.quarantines(t); len(q) != 0 {
		t.Errorf("quarantines after Land: %q", q)
	}
	if err := st.Drop(); err != nil {
		t.Errorf("drop after land: %v", err)
	}
	if err := st.Land(ctx); !errors.Is(err, mirror.ErrInvalid) {
		t.Errorf("land again: %v, want ErrInvalid", err)
	}

	// The kennel rewrote the branch: Land forces it.
	s.git("commit", "-q", "--amend", "-m", "second change, reworded")
	rewritten := s.rev("HEAD")
	st, _, err = h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatalf("stage a rewrite: %v", err)
	}
	if err := st.Land(ctx); err != nil {
		t.Fatalf("land a rewrite: %v", err)
	}
	if got := hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t1"); got != rewritten {
		t.Errorf("fetch/t1 at %s after a rewrite, want %s", got, rewritten)
	}
}

// TestStageDrop: a dropped stage leaves the mirror as it was.
func TestStageDrop(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	before := h.state(t)
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", "dropped\n")
	tip := s.commit("dropped")

	st, _, err := h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	if err := st.Drop(); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if h.has(tip) || h.has(s.rev("HEAD:b.txt")) {
		t.Errorf("the mirror has the dropped objects")
	}
	if diff := cmp.Diff(before, h.state(t)); diff != "" {
		t.Errorf("the mirror after Drop (-before +after):\n%s", diff)
	}
	if q := h.quarantines(t); len(q) != 0 {
		t.Errorf("quarantines after Drop: %q", q)
	}
	if err := st.Drop(); err != nil {
		t.Errorf("drop again: %v", err)
	}
	if err := st.Land(ctx); !errors.Is(err, mirror.ErrInvalid) {
		t.Errorf("land after drop: %v, want ErrInvalid", err)
	}
}

// TestStageRefusesBadBundles: whatever is wrong with a bundle, nothing of
// it reaches the mirror and no quarantine stays.
func TestStageRefusesBadBundles(t *testing.T) {
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", "work\n")
	tip := s.commit("work")
	s.git("branch", "fetch/other", "main")
	s.git("checkout", "-q", "fetch/other")
	s.write("c.txt", "other\n")
	s.commit("other")
	thin := s.bundle("fetch/t1", "^main")
	refLine := tip + " refs/heads/fetch/t1"

	tests := []struct {
		name   string
		bundle []byte
		want   error
	}{
		{"not a bundle", []byte("hello\n"), mirror.ErrBadBundle},
		{"empty", nil, mirror.ErrBadBundle},
		{"header without its end", []byte("# v2 git bundle\n" + refLine + "\n"), mirror.ErrBadBundle},
		{"another ref", s.bundle("fetch/other", "^main"), mirror.ErrBadBundle},
		{"two refs", s.bundle("fetch/t1", "fetch/other", "^main"), mirror.ErrBadBundle},
		{"a tip not in it", withHeader(thin, "# v2 git bundle", "-"+main, strings.Repeat("ab", 20)+" refs/heads/fetch/t1"), mirror.ErrBadBundle},
		{"a tip that is a tree", withHeader(thin, "# v2 git bundle", "-"+main, s.rev("fetch/t1^{tree}")+" refs/heads/fetch/t1"), mirror.ErrBadBundle},
		{"another object format", withHeader(thin, "# v3 git bundle", "@object-format=sha256", "-"+main, refLine), mirror.ErrBadBundle},
		{"a filter", withHeader(thin, "# v3 git bundle", "@object-format=sha1", "@filter=blob:none", "-"+main, refLine), mirror.ErrBadBundle},
		{"a short ref line", withHeader(thin, "# v2 git bundle", "-"+main, tip[:12]+" refs/heads/fetch/t1"), mirror.ErrBadBundle},
		{"a cut pack", thin[:len(thin)-30], mirror.ErrBadBundle},
		{"data after the pack", append(slices.Clone(thin), "junk"...), mirror.ErrBadBundle},
		{"an object failing fsck", badCommitBundle(t, s, main), mirror.ErrBadBundle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.state(t)
			st, _, err := h.Stage(context.Background(), "demo", "fetch/t1", main, bytes.NewReader(tc.bundle))
			if !errors.Is(err, tc.want) {
				st.Drop()
				t.Fatalf("stage: %v, want %v", err, tc.want)
			}
			if errors.Is(err, mirror.ErrMissingBase) {
				t.Errorf("a bad bundle is ErrMissingBase too: %v", err)
			}
			t.Logf("refused: %v", err)
			if diff := cmp.Diff(before, h.state(t)); diff != "" {
				t.Errorf("the mirror after a refused stage (-before +after):\n%s", diff)
			}
			if q := h.quarantines(t); len(q) != 0 {
				t.Errorf("quarantines after a refused stage: %q", q)
			}
		})
	}
}

// badCommitBundle returns a bundle of refs/heads/fetch/t1 at a commit
// whose author date is broken (written past git's checks), over main.
func badCommitBundle(t testing.TB, s *source, main string) []byte {
	t.Helper()
	raw := "tree " + s.rev("main^{tree}") + "\nparent " + main +
		"\nauthor Bad <bad@example.com> notadate +0000\ncommitter Bad <bad@example.com> 1700000000 +0000\n\nbad\n"
	path := filepath.Join(t.TempDir(), "bad-commit")
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := strings.TrimSpace(s.git("hash-object", "-t", "commit", "-w", "--literally", path))
	s.git("update-ref", "refs/heads/fetch/bad", bad)
	return withHeader(s.bundle("fetch/bad", "^main"), "# v2 git bundle", "-"+main, bad+" refs/heads/fetch/t1")
}

// TestStageMissingBase: a thin bundle whose prerequisite the mirror lacks
// (or with no mirror yet) is ErrMissingBase and changes nothing; the whole
// history then stages.
func TestStageMissingBase(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	h := newHostMirror(t)
	main := s.rev("main")
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", "work\n")
	tip := s.commit("work")
	thin := s.bundle("fetch/t1", "^main")

	// No mirror yet.
	_, _, err := h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(thin))
	if !errors.Is(err, mirror.ErrMissingBase) || errors.Is(err, mirror.ErrBadBundle) {
		t.Fatalf("stage with no mirror: %v, want ErrMissingBase alone", err)
	}
	if h.has(tip) || h.has("refs/heads/fetch/t1") || len(h.quarantines(t)) != 0 {
		t.Errorf("the new mirror has some of the bundle, or a quarantine stayed")
	}

	// A mirror that has main, and a branch on a commit over main that the
	// mirror lacks: the bundle's prerequisite.
	h.seed(t, s)
	before := h.state(t)
	s.git("checkout", "-q", "-b", "fetch/t2", "main")
	s.write("a.txt", "uno\n")
	base := s.commit("a base the mirror lacks")
	s.write("c.txt", "on that base\n")
	tip2 := s.commit("work on that base")
	_, _, err = h.Stage(ctx, "demo", "fetch/t2", base, bytes.NewReader(s.bundle("fetch/t2", "^"+base)))
	if !errors.Is(err, mirror.ErrMissingBase) || errors.Is(err, mirror.ErrBadBundle) {
		t.Fatalf("stage over a base the mirror lacks: %v, want ErrMissingBase alone", err)
	}
	t.Logf("refused: %v", err)
	if diff := cmp.Diff(before, h.state(t)); diff != "" {
		t.Errorf("the mirror after ErrMissingBase (-before +after):\n%s", diff)
	}
	// Take keeps its word: ErrBadBundle (and ErrMissingBase).
	err = h.Take(ctx, "demo", "fetch/t2", tip2, bytes.NewReader(s.bundle("fetch/t2", "^"+base)))
	if !errors.Is(err, mirror.ErrBadBundle) || !errors.Is(err, mirror.ErrMissingBase) {
		t.Errorf("take over a base the mirror lacks: %v, want ErrBadBundle and ErrMissingBase", err)
	}
	if len(h.quarantines(t)) != 0 || h.has(tip2) {
		t.Errorf("a refused take left a quarantine or objects")
	}

	// The whole history: staged, and what git says of it.
	st, ch, err := h.Stage(ctx, "demo", "fetch/t2", base, bytes.NewReader(s.bundle("fetch/t2")))
	if err != nil {
		t.Fatalf("stage the whole history: %v", err)
	}
	defer st.Drop()
	want := mirror.Changes{
		Tip:  tip2,
		Diff: s.git(append(slices.Clone(diffArgs), base, tip2, "--")...),
		Log:  s.git(append(slices.Clone(logArgs), base+".."+tip2, "--")...),
	}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t2"); got != tip2 || !h.has(base) {
		t.Errorf("after Land: fetch/t2 at %s (want %s), base there: %v", got, tip2, h.has(base))
	}
	hostGit(t, h.dir, "fsck", "--strict", "--no-dangling")
}

// TestStageTipAtBase: a bundle that adds nothing (a hostile kennel's; git
// makes none) needs no pack; Land only sets the ref.
func TestStageTipAtBase(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	header := []byte("# v2 git bundle\n" + main + " refs/heads/fetch/t1\n\n")
	st, ch, err := h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(header))
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	if diff := cmp.Diff(mirror.Changes{Tip: main}, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(h.quarantines(t)) != 0 {
		t.Errorf("a quarantine for nothing")
	}
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t1"); got != main {
		t.Errorf("fetch/t1 at %s, want %s", got, main)
	}
	// A base the mirror does not have.
	s.commit("not in the mirror")
	other := s.rev("HEAD")
	header = []byte("# v2 git bundle\n" + other + " refs/heads/fetch/t2\n\n")
	if _, _, err := h.Stage(ctx, "demo", "fetch/t2", other, bytes.NewReader(header)); !errors.Is(err, mirror.ErrMissingBase) {
		t.Errorf("stage at a base the mirror lacks: %v, want ErrMissingBase", err)
	}
}

// TestStageCutsALargeDiff: the diff is cut at 8 MiB, and says so.
func TestStageCutsALargeDiff(t *testing.T) {
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("big.txt", strings.Repeat("a line of a large file\n", 400_000)) // 9.2 MB
	tip := s.commit("large")
	st, ch, err := h.Stage(context.Background(), "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Drop()
	full := s.git(append(slices.Clone(diffArgs), main, tip, "--")...)
	if !ch.Truncated || len(ch.Diff) != 8<<20 || !strings.HasPrefix(full, ch.Diff) {
		t.Errorf("diff of %d bytes (truncated %v), want the first 8 MiB of %d", len(ch.Diff), ch.Truncated, len(full))
	}
	if ch.Log != s.git(append(slices.Clone(logArgs), main+".."+tip, "--")...) {
		t.Errorf("log %q", ch.Log)
	}
}

// TestStageBundleBound: a bundle over Config.MaxBundle is ErrTooLarge.
func TestStageBundleBound(t *testing.T) {
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", strings.Repeat("x", 1000))
	s.commit("work")
	m, err := mirror.New(mirror.Config{Root: h.root, Kennel: nopKennel{}, MaxBundle: 300})
	if err != nil {
		t.Fatal(err)
	}
	before := h.state(t)
	bundle := s.bundle("fetch/t1", "^main")
	for _, b := range [][]byte{bundle, append(slices.Clone(bundle), strings.Repeat("x", 1000)...)} {
		if len(bundle) < 300 {
			t.Fatalf("the bundle is only %d bytes", len(bundle))
		}
		if _, _, err := m.Stage(context.Background(), "demo", "fetch/t1", main, bytes.NewReader(b)); !errors.Is(err, mirror.ErrTooLarge) {
			t.Errorf("stage over the bound: %v, want ErrTooLarge", err)
		}
	}
	if diff := cmp.Diff(before, h.state(t)); diff != "" || len(h.quarantines(t)) != 0 {
		t.Errorf("the mirror after a bundle over the bound (-before +after):\n%s", diff)
	}
}

// TestStaleQuarantineRemoved: a quarantine an hour older than a new one
// was left by a process that ended before Land; it goes, a recent one
// stays.
func TestStaleQuarantineRemoved(t *testing.T) {
	s := newSource(t)
	h := newHostMirror(t)
	main := h.seed(t, s)
	stale, recent := filepath.Join(h.root, ".tmp", "stage-stale"), filepath.Join(h.root, ".tmp", "stage-recent")
	for _, d := range []string{stale, recent} {
		if err := os.MkdirAll(filepath.Join(d, "pack"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", "work\n")
	s.commit("work")
	st, _, err := h.Stage(context.Background(), "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Drop()
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale quarantine is still there: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the recent quarantine is gone: %v", err)
	}
}

// TestConcurrentStages: stages on one workspace, its mirror not made yet,
// run at the same time and all land; run under -race.
func TestConcurrentStages(t *testing.T) {
	s := newSource(t)
	h := newHostMirror(t)
	main := s.rev("main")
	bundles := make([][]byte, 4)
	tips := make([]string, 4)
	for i := range bundles {
		b := "fetch/c" + string(rune('1'+i))
		s.git("checkout", "-q", "-b", b, "main")
		s.write("f.txt", b+"\n")
		tips[i] = s.commit(b)
		bundles[i] = s.bundle(b) // whole: the mirror may not have main yet
	}
	var wg sync.WaitGroup
	errs := make([]error, len(bundles))
	for i := range bundles {
		wg.Go(func() {
			st, _, err := h.Stage(context.Background(), "demo", "fetch/c"+string(rune('1'+i)), main, bytes.NewReader(bundles[i]))
			if err == nil {
				err = st.Land(context.Background())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("stage %d: %v", i+1, err)
		} else if got := hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/c"+string(rune('1'+i))); got != tips[i] {
			t.Errorf("fetch/c%d at %s, want %s", i+1, got, tips[i])
		}
	}
	hostGit(t, h.dir, "fsck", "--strict", "--no-dangling")
}

// TestStageImport: a bundle Stage refuses for its missing base; the
// kennel's whole history then stages, as what git prints in the
// workspace's repository; later stages take only what the mirror lacks.
func TestStageImport(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustImport(e.ref("main", ""))
	// main moves on in the kennel, and the task's branch starts there.
	wt := e.ws + "/.fetch/worktrees/t1"
	e.sh(`echo four >> a.txt && git commit -qam "main moves" && git worktree add -q -b fetch/t1 .fetch/worktrees/t1 main`)
	base := e.kennelRev("main")
	e.shIn(wt, `echo work > b.txt && git add b.txt && git commit -qm "add b" && printf 'x\000y' > bin.dat && git add bin.dat && git commit -qm binary`)
	e.shIn(wt, `git bundle create -q "$(git rev-parse --git-common-dir)/thin.bundle" fetch/t1 ^main`)
	thin, err := os.ReadFile(filepath.Join(e.ws, ".git", "thin.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.m.Stage(ctx, e.name, "fetch/t1", base, bytes.NewReader(thin)); !errors.Is(err, mirror.ErrMissingBase) {
		t.Fatalf("stage over a base the mirror lacks: %v, want ErrMissingBase", err)
	}

	r := e.ref("fetch/t1", base)
	r.Dir = wt
	stageImport := func() *mirror.Staged {
		t.Helper()
		st, ch, err := e.m.StageImport(ctx, r)
		if err != nil {
			t.Fatalf("stage import: %v", err)
		}
		tip := e.kennelRev("fetch/t1")
		want := mirror.Changes{
			Tip:  tip,
			Diff: workspaceGit(t, e.ws, append(slices.Clone(diffArgs), base, tip, "--")...),
			Log:  workspaceGit(t, e.ws, append(slices.Clone(logArgs), base+".."+tip, "--")...),
		}
		if diff := cmp.Diff(want, ch); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		return st
	}

	// The whole history: the mirror lacks the base.
	st := stageImport()
	if e.mirrorRev(st.Tip()+"^{commit}") != "" || e.mirrorRev(base+"^{commit}") != "" || e.mirrorRev("refs/heads/fetch/t1") != "" {
		t.Errorf("the mirror has some of the branch before Land")
	}
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.mirrorRev("refs/heads/fetch/t1"); got != st.Tip() || e.mirrorRev(base+"^{commit}") != base {
		t.Errorf("after Land: fetch/t1 at %s, want %s; base there: %q", got, st.Tip(), e.mirrorRev(base+"^{commit}"))
	}

	// More work: only what the mirror lacks crosses. A tip the caller
	// names must be the bundle's.
	e.shIn(wt, `echo again >> b.txt && git commit -qam again`)
	r.Tip = strings.Repeat("1", 40)
	if _, _, err := e.m.StageImport(ctx, r); !errors.Is(err, mirror.ErrBadBundle) {
		t.Errorf("stage import at a tip not the branch's: %v, want ErrBadBundle", err)
	}
	r.Tip = e.kennelRev("fetch/t1")
	st = stageImport()
	r.Tip = ""
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.mirrorRev("refs/heads/fetch/t1"); got != st.Tip() {
		t.Errorf("after the second Land: fetch/t1 at %s, want %s", got, st.Tip())
	}

	// Nothing new: the mirror has the tip, no bundle crosses.
	st = stageImport()
	if q, _ := filepath.Glob(filepath.Join(e.root, ".tmp", "stage-*")); len(q) != 0 {
		t.Errorf("a quarantine for a tip the mirror has: %q", q)
	}
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	hostGit(t, filepath.Join(e.root, e.name+".git"), "fsck", "--strict", "--no-dangling")

	r.Base = ""
	if _, _, err := e.m.StageImport(ctx, r); !errors.Is(err, mirror.ErrInvalid) {
		t.Errorf("stage import without a base: %v, want ErrInvalid", err)
	}
}

// workspaceGit runs host git on the test's own workspace repository and
// returns its stdout as it is.
func workspaceGit(t testing.TB, ws string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + filepath.Join(ws, ".git"), "-c", "safe.directory=*"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return string(out)
}

// BenchmarkStageLand: Stage and Land of a thin bundle of one small commit
// (what a task's run hands over), host git only; ms/stage+land is the
// figure, ms/land the part of it under the workspace's lock.
func BenchmarkStageLand(b *testing.B) {
	ctx := context.Background()
	s := newSource(b)
	h := newHostMirror(b)
	h.Mirror, _ = mirror.New(mirror.Config{Root: h.root, Kennel: nopKennel{}})
	main := h.seed(b, s)
	var landing time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		branch := "fetch/b" + strconv.Itoa(i)
		s.git("checkout", "-q", "-b", branch, main)
		s.write("b.txt", "work "+strconv.Itoa(i)+"\n")
		s.commit("work")
		bundle := s.bundle(branch, "^"+main)
		b.StartTimer()
		st, _, err := h.Stage(ctx, "demo", branch, main, bytes.NewReader(bundle))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := st.Land(ctx); err != nil {
			b.Fatal(err)
		}
		landing += time.Since(start)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/stage+land")
	b.ReportMetric(float64(landing.Microseconds())/1000/float64(b.N), "ms/land")
}

// TestStageUnderAColonInRoot: the mirror's objects reach git as an
// alternate in a list split at colons; a root with one still works.
func TestStageUnderAColonInRoot(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	root := filepath.Join(t.TempDir(), `odd:"root`)
	m, err := mirror.New(mirror.Config{Root: root, Kennel: nopKennel{}})
	if err != nil {
		t.Fatal(err)
	}
	h := hostMirror{Mirror: m, root: root, dir: filepath.Join(root, "demo.git")}
	main := h.seed(t, s)
	s.git("checkout", "-q", "-b", "fetch/t1")
	s.write("b.txt", "work\n")
	tip := s.commit("work")
	st, ch, err := h.Stage(ctx, "demo", "fetch/t1", main, bytes.NewReader(s.bundle("fetch/t1", "^main")))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Land(ctx); err != nil {
		t.Fatal(err)
	}
	if ch.Tip != tip || hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t1") != tip {
		t.Errorf("fetch/t1 at %s, changes at %s; want %s", hostGit(t, h.dir, "rev-parse", "refs/heads/fetch/t1"), ch.Tip, tip)
	}
}

// TestLandRollsUpPacks: every Land adds a pack; past a bound they are
// rolled up, and nothing is lost.
func TestLandRollsUpPacks(t *testing.T) {
	ctx := context.Background()
	s := newSource(t)
	h := newHostMirror(t)
	base := h.seed(t, s)
	tips := map[string]string{}
	for i := range 40 {
		branch := fmt.Sprintf("fetch/t%d", i)
		s.git("checkout", "-q", "-b", branch, base)
		s.write(fmt.Sprintf("f%d.txt", i), strings.Repeat(fmt.Sprintf("line %d\n", i), i+1))
		tips[branch] = s.commit(branch)
		st, _, err := h.Stage(ctx, "demo", branch, base, bytes.NewReader(s.bundle(branch, "^"+base)))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Land(ctx); err != nil {
			t.Fatal(err)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(h.dir, "objects", "pack", "pack-*.pack"))
	if len(packs) > 17 {
		t.Errorf("%d packs after 40 lands", len(packs))
	}
	for branch, tip := range tips {
		if got := hostGit(t, h.dir, "rev-parse", "refs/heads/"+branch); got != tip {
			t.Errorf("%s at %s, want %s", branch, got, tip)
		}
	}
	hostGit(t, h.dir, "fsck", "--strict", "--no-dangling")
}
