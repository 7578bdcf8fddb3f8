package mirror

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fetch-dev/fetch/internal/gitrun"
)

// Staged is a task branch's objects, verified, held in a quarantine
// object directory next to the workspace's mirror (under Root/.tmp): the
// mirror's refs and objects are unchanged until Land; Drop removes them.
// A Staged is for one goroutine at a time.
type Staged struct {
	m      *Mirror
	ws     string
	branch string
	tip    string
	base   string      // what Scan scans from (Stage's base, StageImport's Ref.Base)
	dir    string      // the workspace's mirror
	mirror os.FileInfo // dir when staged: Land refuses a mirror made anew since
	q      string      // the quarantine object directory; "" when no pack was needed
	pack   string      // the name index-pack gave the pack in q
	over   bool        // landed or dropped
}

// Tip is the commit Land points the branch at.
func (s *Staged) Tip() string { return s.tip }

// Changes is what the staged branch holds over its base, read by the
// host's git (the mirror's objects plus the quarantine's).
type Changes struct {
	Tip string
	// Diff is exactly what
	//   git diff --numstat -z --binary --patch --no-renames --no-ext-diff --no-textconv BASE TIP --
	// prints (the numstat's NUL-terminated records, an empty record, then
	// the patch), cut at 8 MiB (Truncated). Paths in the patch are not
	// quoted (core.quotePath=false, as gitrun runs git in the kennel).
	Diff      string
	Truncated bool
	// Log is exactly what
	//   git log --no-show-signature --reverse --format=%H%x00%s%x00%an%x00%cI%x1e BASE..TIP --
	// prints.
	Log string
}

// maxChangesDiff bounds Changes.Diff.
const maxChangesDiff = 8 << 20

// What Changes holds, before BASE TIP -- or BASE..TIP --.
var (
	changesDiff = []string{"diff", "--numstat", "-z", "--binary", "--patch", "--no-renames", "--no-ext-diff", "--no-textconv"}
	changesLog  = []string{"log", "--no-show-signature", "--reverse", "--format=%H%x00%s%x00%an%x00%cI%x1e"}
)

// Stage verifies bundle (a v2 or v3 git bundle holding refs/heads/BRANCH
// alone) and takes its objects into a quarantine: the pack after the
// bundle's header goes to `git index-pack --strict --fix-thin --stdin`
// run with the quarantine as its object directory and the mirror's
// objects as an alternate, so that every object is fsck'd and every link
// checked before anything is in the mirror. Then the diff and log of
// BASE..TIP are read. base is trusted (Fetch read it before the run); the
// tip comes from the bundle's header. The bundle is read as a stream, at
// most Config.MaxBundle bytes (beyond: ErrTooLarge).
//
// A bundle whose prerequisites the mirror lacks (or no mirror yet) is an
// error wrapping ErrMissingBase: StageImport then brings the whole
// history. Any other verification failure wraps ErrBadBundle. The mirror
// is created when missing. Stage holds no lock when it returns: the
// caller decides, then calls Land or Drop.
func (m *Mirror) Stage(ctx context.Context, ws, branch, base string, bundle io.Reader) (*Staged, Changes, error) {
	op := "mirror: stage " + branch
	if err := errors.Join(checkName(ws), checkBranch(branch), checkSHA(base)); err != nil {
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	dir, fresh, err := m.ensureShared(ctx, ws)
	if err != nil {
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	s, err := m.stage(ctx, stageSpec{ws: ws, branch: branch, dir: dir, fresh: fresh, base: base}, bundle)
	if err != nil {
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	s.base = base
	ch, err := m.changes(ctx, s, base)
	if err != nil {
		s.Drop()
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	return s, ch, nil
}

// Land moves the staged objects into the mirror (the pack's files renamed
// into objects/pack, the .pack before the .idx so that no reader sees an
// index without its pack) and points refs/heads/BRANCH at the tip (forced:
// the kennel may have rewritten the branch), under the workspace's lock.
// Then the quarantine is gone. After a failed Land the Staged is still
// there, for another Land or a Drop.
func (s *Staged) Land(ctx context.Context) error {
	if err := s.land(ctx); err != nil {
		return fmt.Errorf("mirror: land %s: %w", s.branch, err)
	}
	s.m.log.Info("mirror: landed", logWorkspace, s.ws, logBranch, s.branch, "commit", s.tip)
	return nil
}

// Drop removes the quarantine. It is idempotent, and does nothing after
// Land (nor on a nil Staged).
func (s *Staged) Drop() error {
	if s == nil || s.over {
		return nil
	}
	s.over = true
	if s.q == "" {
		return nil
	}
	if err := os.RemoveAll(s.q); err != nil {
		return fmt.Errorf("mirror: drop %s: %w", s.branch, err)
	}
	return nil
}

func (s *Staged) land(ctx context.Context) error {
	if s.over {
		return fmt.Errorf("already landed or dropped: %w", ErrInvalid)
	}
	unlock, err := s.m.lock(ctx, s.ws)
	if err != nil {
		return err
	}
	err = s.landLocked(ctx)
	unlock()
	if err != nil {
		return err
	}
	s.over = true
	if s.q != "" {
		s.m.removeQuarantine(s.q)
	}
	return nil
}

func (s *Staged) landLocked(ctx context.Context) error {
	// The pack names objects of the mirror it was checked against; a
	// mirror deleted (and perhaps made anew) since does not have them.
	if fi, err := os.Stat(s.dir); err != nil || !os.SameFile(fi, s.mirror) {
		return fmt.Errorf("the mirror of %s was deleted since the stage: %w", s.ws, ErrNotFound)
	}
	if s.pack != "" {
		if err := movePack(filepath.Join(s.q, "pack"), filepath.Join(s.dir, "objects", "pack"), "pack-"+s.pack); err != nil {
			return fmt.Errorf("move the pack into the mirror: %w", err)
		}
	}
	if err := s.m.setRef(ctx, s.dir, "refs/heads/"+s.branch, s.tip); err != nil {
		return err
	}
	if s.pack != "" {
		s.m.consolidate(ctx, s.dir)
	}
	return nil
}

// maxPacks is how many packs a mirror may hold before Land rolls them up:
// every Land adds one, and git looks an object up pack by pack.
const maxPacks = 16

// consolidate rolls dir's packs up when there are more than maxPacks, the
// smaller ones into bigger (git repack --geometric=2: each pack at least
// twice the size of all smaller ones together, so the work is spread
// thin over the Lands). Its failure is logged: the mirror is whole either
// way. The caller holds the workspace's lock.
func (m *Mirror) consolidate(ctx context.Context, dir string) {
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if err != nil || len(packs) <= maxPacks {
		return
	}
	if _, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"repack", "--geometric=2", "-d", "-l", "-q", "--no-write-bitmap-index"}}); err != nil {
		m.log.Warn("mirror: roll up packs", logErr, err, "packs", len(packs))
	}
}

// movePack renames pack NAME's files from the directory src to dst: the
// .pack first and the .idx last, for git finds a pack by its index. A
// file already moved (by a Land that failed after it) is skipped.
func movePack(src, dst, name string) error {
	for _, ext := range []string{".pack", ".rev", ".idx"} {
		from, to := filepath.Join(src, name+ext), filepath.Join(dst, name+ext)
		err := os.Rename(from, to)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(to); serr == nil || ext == ".rev" {
				continue // moved already; or no reverse index (git 2.39 writes none by default)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// env is the environment that shows git the quarantine's objects with the
// mirror's; nil when there is no quarantine.
func (s *Staged) env() []string {
	if s.q == "" {
		return nil
	}
	return quarantineEnv(s.dir, s.q)
}

// quarantineEnv makes q git's object directory, the mirror dir's objects
// an alternate: what git writes goes to q, what it reads comes from both.
func quarantineEnv(dir, q string) []string {
	return []string{
		"GIT_OBJECT_DIRECTORY=" + q,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + quoteAlternate(filepath.Join(dir, "objects")),
	}
}

// quoteAlternate quotes a path for GIT_ALTERNATE_OBJECT_DIRECTORIES, which
// git splits at colons unless the entry is C-quoted.
func quoteAlternate(p string) string {
	if !strings.ContainsAny(p, ":\"\\") {
		return p
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p) + `"`
}

// ensureShared returns the workspace's repository as ensure does, taking
// the workspace's lock only to create it; fresh tells that it was made
// here (it holds no object).
func (m *Mirror) ensureShared(ctx context.Context, ws string) (dir string, fresh bool, err error) {
	dir, err = m.existing(ws)
	if !errors.Is(err, ErrNotFound) {
		return dir, false, err
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	if dir, err := m.existing(ws); !errors.Is(err, ErrNotFound) {
		return dir, false, err // made meanwhile
	}
	dir, err = m.ensure(ctx, ws)
	return dir, err == nil, err
}

// stageSpec is what stage checks a bundle against.
type stageSpec struct {
	ws, branch string
	dir        string // the workspace's mirror
	fresh      bool   // the mirror was just made: it holds no object
	tip        string // the tip the bundle must name; any when ""
	// base, when set, is the branch's base: a tip there needs no pack
	// (Stage's caller sends no bundle then, but a hostile one could).
	base string
}

// newStaged returns a Staged of sp at tip, with no quarantine yet.
func (m *Mirror) newStaged(sp stageSpec, tip string) (*Staged, error) {
	fi, err := os.Stat(sp.dir)
	if err != nil {
		return nil, err
	}
	return &Staged{m: m, ws: sp.ws, branch: sp.branch, tip: tip, dir: sp.dir, mirror: fi}, nil
}

// stage reads bundle's header, checks it against sp, and indexes its pack
// into a new quarantine. The tip is not checked to be a commit that is
// there: changes and verify do that.
func (m *Mirror) stage(ctx context.Context, sp stageSpec, bundle io.Reader) (*Staged, error) {
	src := &boundedReader{r: bundle, max: m.cfg.MaxBundle}
	br := bufio.NewReaderSize(src, maxBundleHeader)
	h, err := readBundleHeader(br)
	if err != nil {
		if rerr := src.Err(); rerr != nil {
			return nil, fmt.Errorf("read the bundle: %w", rerr)
		}
		return nil, fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	ref := "refs/heads/" + sp.branch
	tip, err := h.tip(ref)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	if sp.tip != "" && tip != sp.tip {
		return nil, fmt.Errorf("bundle has %s at %s, want %s: %w", ref, tip, sp.tip, ErrBadBundle)
	}
	s, err := m.newStaged(sp, tip)
	if err != nil {
		return nil, err
	}
	if tip == sp.base {
		// Nothing to take: the branch is where it started, which the
		// mirror must have.
		types, err := m.objectTypes(ctx, sp.dir, nil, tip)
		if err != nil {
			return nil, err
		}
		if types[0] != "commit" {
			return nil, fmt.Errorf("base %s is not in the mirror: %w", tip, ErrMissingBase)
		}
		return s, nil
	}
	if sp.fresh && len(h.prereqs) > 0 {
		return nil, fmt.Errorf("the mirror is new and lacks the bundle's prerequisites (%d): %w", len(h.prereqs), ErrMissingBase)
	}
	q, err := m.newQuarantine()
	if err != nil {
		return nil, fmt.Errorf("quarantine: %w", err)
	}
	pack, err := m.indexPack(ctx, sp.dir, q, br)
	if rerr := src.Err(); rerr != nil {
		// What index-pack said follows from its input cut short.
		err = fmt.Errorf("read the bundle: %w", rerr)
	} else if err != nil {
		err = m.whyRefused(ctx, sp.dir, h.prereqs, err)
	}
	if err != nil {
		m.removeQuarantine(q)
		return nil, err
	}
	s.q, s.pack = q, pack
	return s, nil
}

// indexPack runs index-pack on pack (a bundle's, after its header) into
// the quarantine q, with the mirror dir's objects as an alternate, and
// returns the name it gave the pack.
func (m *Mirror) indexPack(ctx context.Context, dir, q string, pack io.Reader) (string, error) {
	out, err := m.hostGit(ctx, hostCmd{
		gitDir:  dir,
		env:     quarantineEnv(dir, q),
		stdin:   pack,
		max:     maxIndexPackOutput,
		timeout: m.cfg.TransferTimeout,
		args:    []string{"index-pack", "--strict", "--fix-thin", "--stdin", "--max-input-size=" + strconv.FormatInt(m.cfg.MaxBundle, 10)},
	})
	if errors.Is(err, ErrTooLarge) {
		return "", fmt.Errorf("data after the bundle's pack: %w", ErrBadBundle)
	}
	if err != nil {
		return "", err
	}
	// "pack\t<name>\n"; index-pack copies to stdout what follows the pack
	// on stdin, and a bundle has nothing there.
	line, ok := strings.CutPrefix(out, "pack\t")
	name, rest, _ := strings.Cut(line, "\n")
	if !ok || checkSHA(name) != nil || rest != "" {
		return "", fmt.Errorf("index-pack printed %.100q (data after the bundle's pack?): %w", out, ErrBadBundle)
	}
	return name, nil
}

// maxIndexPackOutput bounds what index-pack prints: its one line.
const maxIndexPackOutput = 4 << 10

// whyRefused tells why index-pack refused a bundle's pack (err): the
// mirror lacks one of its prerequisites (ErrMissingBase), or the bundle is
// bad (ErrBadBundle). It asks git only then, by one cat-file: a pack the
// mirror can take needs no check of the prerequisites (index-pack found
// every object its objects link to).
func (m *Mirror) whyRefused(ctx context.Context, dir string, prereqs []string, err error) error {
	var ge *gitrun.GitError
	if errors.Is(err, ErrBadBundle) || !errors.As(err, &ge) {
		return err // already known, or index-pack did not run to its end
	}
	if len(prereqs) > 0 {
		types, terr := m.objectTypes(ctx, dir, nil, prereqs...)
		if terr != nil {
			return fmt.Errorf("index-pack refused the bundle (%w), and its prerequisites could not be checked: %w", err, terr)
		}
		if i := slices.Index(types, "missing"); i >= 0 {
			return fmt.Errorf("the mirror lacks %s, a prerequisite of the bundle: %w (%w)", prereqs[i], ErrMissingBase, err)
		}
	}
	return fmt.Errorf("%w: %w", ErrBadBundle, err)
}

// changes reads what s holds over base: the diff and the log, by two git
// commands at the same time. A tip that is not a commit there, or a base
// that is not, is found here too.
func (m *Mirror) changes(ctx context.Context, s *Staged, base string) (Changes, error) {
	ch := Changes{Tip: s.tip}
	if s.tip == base {
		// What git prints for an empty range; a tip that came in a pack
		// is checked all the same.
		if s.q != "" {
			if err := m.verify(ctx, s, ""); err != nil {
				return Changes{}, err
			}
		}
		return ch, nil
	}
	env := s.env()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		out, err := m.hostGit(gctx, hostCmd{gitDir: s.dir, env: env, max: maxChangesDiff, args: append(slices.Clone(changesDiff), base, s.tip, "--")})
		if errors.Is(err, ErrTooLarge) {
			ch.Truncated, err = true, nil
		}
		ch.Diff = out
		return err
	})
	g.Go(func() error {
		out, err := m.hostGit(gctx, hostCmd{gitDir: s.dir, env: env, args: append(slices.Clone(changesLog), base+".."+s.tip, "--")})
		ch.Log = out
		return err
	})
	err := g.Wait()
	// The log ends with the tip when the tip is a commit over base (the
	// usual case: nothing more to ask). Otherwise, or when git failed,
	// one cat-file tells a bad tip or a missing base from other failures.
	if err != nil || lastCommit(ch.Log) != s.tip {
		if verr := m.verify(ctx, s, base); verr != nil {
			return Changes{}, verr
		}
	}
	if err != nil {
		return Changes{}, err
	}
	return ch, nil
}

// lastCommit returns the commit of the last record of a log in
// changesLog's format ("" when there is none). No record holds "\x1e\n"
// but at its end: neither a subject nor a name holds a newline.
func lastCommit(log string) string {
	log = strings.TrimSuffix(log, "\x1e\n")
	if i := strings.LastIndex(log, "\x1e\n"); i >= 0 {
		log = log[i+2:]
	}
	h, _, _ := strings.Cut(log, "\x00")
	return h
}

// verify checks that the staged tip is a commit, and base (when given)
// too, in the mirror or the quarantine.
func (m *Mirror) verify(ctx context.Context, s *Staged, base string) error {
	ids := []string{s.tip}
	if base != "" && base != s.tip {
		ids = append(ids, base)
	}
	types, err := m.objectTypes(ctx, s.dir, s.env(), ids...)
	if err != nil {
		return err
	}
	switch {
	case types[0] == "missing":
		return fmt.Errorf("the bundle's tip %s is neither in it nor in the mirror: %w", s.tip, ErrBadBundle)
	case types[0] != "commit":
		return fmt.Errorf("the bundle's tip %s is a %s, want a commit: %w", s.tip, types[0], ErrBadBundle)
	case len(types) > 1 && types[1] != "commit":
		return fmt.Errorf("base %s is neither in the mirror nor in the bundle: %w", base, ErrMissingBase)
	}
	return nil
}

// objectTypes returns the type of each object ("missing" when absent) in
// dir, plus the object directories env names, by one git cat-file. ids
// are full object names.
func (m *Mirror) objectTypes(ctx context.Context, dir string, env []string, ids ...string) ([]string, error) {
	var in strings.Builder
	for _, id := range ids {
		if err := checkSHA(id); err != nil {
			return nil, err
		}
		in.WriteString(id + "\n")
	}
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, env: env, stdin: strings.NewReader(in.String()),
		args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype)"}})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(ids) {
		return nil, fmt.Errorf("git cat-file: %d lines for %d objects", len(lines), len(ids))
	}
	types := make([]string, len(ids))
	for i, line := range lines {
		name, typ, _ := strings.Cut(line, " ")
		if name != ids[i] || typ == "" {
			return nil, fmt.Errorf("git cat-file: %.100q for %s", line, ids[i])
		}
		types[i] = typ
	}
	return types, nil
}

// Quarantines are directories Root/.tmp/stage-*. One left by a process
// that ended between Stage and Land is removed once it is staleQuarantine
// older than a new one.
const (
	quarantinePrefix = "stage-"
	staleQuarantine  = time.Hour
)

// newQuarantine makes an empty quarantine, and removes stale ones.
func (m *Mirror) newQuarantine() (string, error) {
	if err := m.prepare(); err != nil {
		return "", err
	}
	q, err := os.MkdirTemp(m.tmpDir(), quarantinePrefix+"*")
	if err != nil {
		return "", err
	}
	m.removeStale(q)
	return q, nil
}

// removeStale removes the quarantines made staleQuarantine or more before
// fresh. Their age is read on the file system's clock (fresh's time), so
// that no other clock needs to agree with it.
func (m *Mirror) removeStale(fresh string) {
	now, err := os.Stat(fresh)
	if err != nil {
		return
	}
	entries, err := os.ReadDir(m.tmpDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), quarantinePrefix) || e.Name() == filepath.Base(fresh) {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.ModTime().Sub(fi.ModTime()) < staleQuarantine {
			continue
		}
		m.log.Info("mirror: removing a stale quarantine", "dir", e.Name())
		m.removeQuarantine(filepath.Join(m.tmpDir(), e.Name()))
	}
}

// removeQuarantine removes q; a failure is only logged (a stale quarantine
// is removed later).
func (m *Mirror) removeQuarantine(q string) {
	if err := os.RemoveAll(q); err != nil {
		m.log.Warn("mirror: remove a quarantine", "dir", q, logErr, err)
	}
}
