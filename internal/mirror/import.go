package mirror

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/kennel"
)

// Ref names a task branch in a workspace's kennel.
type Ref struct {
	Workspace string // the workspace's name: its mirror is Root/NAME.git
	Path      string // the workspace's absolute host path (it selects the kennel)
	Dir       string // the git directory to run in, in the kennel (the task's worktree); Path when empty
	Branch    string // e.g. fetch/ID
	Base      string // the commit the branch started from, when known: the bundle then leaves it out
	// Tip is the branch's head when the caller read it already (a task's
	// record of its work): the kennel is not asked again. A tip the mirror
	// has needs no bundle; otherwise the bundle's header must name it.
	Tip string
}

func (r Ref) check() error {
	errs := []error{checkName(r.Workspace), checkBranch(r.Branch)}
	if !path.IsAbs(r.Path) || path.Clean(r.Path) != r.Path {
		errs = append(errs, fmt.Errorf("workspace path %q: want an absolute, clean path: %w", r.Path, ErrInvalid))
	}
	if r.Dir != "" && (!path.IsAbs(r.Dir) || path.Clean(r.Dir) != r.Dir) {
		errs = append(errs, fmt.Errorf("dir %q: want an absolute, clean path: %w", r.Dir, ErrInvalid))
	}
	if r.Base != "" {
		errs = append(errs, checkSHA(r.Base))
	}
	if r.Tip != "" {
		errs = append(errs, checkSHA(r.Tip))
	}
	return errors.Join(errs...)
}

func (r Ref) dir() string {
	if r.Dir == "" {
		return r.Path
	}
	return r.Dir
}

// Import copies the task branch from the kennel into the mirror's
// refs/heads/BRANCH (forced: the kennel may have rewritten it) and returns
// its tip: StageImport's transfer, then Land. The objects cross as a
// bundle on the exec's stdout — only what the mirror lacks when it has
// r.Base, the whole history otherwise — and are fsck'd on their way in
// (see the package doc). On any error the mirror's refs are unchanged.
func (m *Mirror) Import(ctx context.Context, r Ref) (string, error) {
	op := "mirror: import " + r.Branch
	if err := r.check(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	s, err := m.transfer(ctx, r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer s.Drop()
	if s.q != "" {
		if err := m.verify(ctx, s, ""); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := s.land(ctx); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	m.log.Info("mirror: imported", logWorkspace, r.Workspace, logBranch, r.Branch, "commit", s.tip)
	return s.tip, nil
}

// StageImport is Import's transfer (the bundle asked of the kennel over
// an exec, only what the mirror lacks when it has r.Base, the whole
// history otherwise), staged like Stage rather than landed: for a bundle
// Stage refused with ErrMissingBase. r.Base is required here; a base in
// neither the mirror nor the branch's history is ErrMissingBase.
func (m *Mirror) StageImport(ctx context.Context, r Ref) (*Staged, Changes, error) {
	op := "mirror: stage import " + r.Branch
	if err := r.check(); err != nil {
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	if r.Base == "" {
		return nil, Changes{}, fmt.Errorf("%s: no base: %w", op, ErrInvalid)
	}
	s, err := m.transfer(ctx, r)
	if err != nil {
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	s.base = r.Base
	ch, err := m.changes(ctx, s, r.Base)
	if err != nil {
		s.Drop()
		return nil, Changes{}, fmt.Errorf("%s: %w", op, err)
	}
	return s, ch, nil
}

// transfer stages r's branch at the tip the kennel names. A tip the mirror
// has needs no bundle; otherwise the kennel's `git bundle create` streams
// from the exec's stdout into stage (and index-pack) through a pipe.
func (m *Mirror) transfer(ctx context.Context, r Ref) (*Staged, error) {
	dir, fresh, err := m.ensureShared(ctx, r.Workspace)
	if err != nil {
		return nil, err
	}
	ref := "refs/heads/" + r.Branch
	tip := r.Tip
	if tip == "" {
		if tip, err = m.kennelGit(ctx, r, "rev-parse", "-q", "--verify", ref+"^{commit}"); err != nil {
			return nil, fmt.Errorf("branch in the kennel: %w", err)
		}
		if checkSHA(tip) != nil {
			return nil, fmt.Errorf("branch in the kennel: odd commit name %q: %w", tip, ErrBadBundle)
		}
	}
	sp := stageSpec{ws: r.Workspace, branch: r.Branch, dir: dir, fresh: fresh, tip: tip}
	ids := []string{tip}
	if r.Base != "" && r.Base != tip {
		ids = append(ids, r.Base)
	}
	types := slices.Repeat([]string{"missing"}, len(ids))
	if !fresh {
		if types, err = m.objectTypes(ctx, dir, nil, ids...); err != nil {
			return nil, err
		}
	}
	if types[0] == "commit" {
		// The mirror has the commit (and, checked on its way in, its
		// history): no bundle needed.
		return m.newStaged(sp, tip)
	}
	args := []string{"bundle", "create", "-", ref}
	if len(types) > 1 && types[1] == "commit" {
		if _, err := m.kennelGit(ctx, r, "cat-file", "-e", r.Base+"^{commit}"); err == nil {
			args = append(args, "^"+r.Base)
		}
	}
	return m.stream(ctx, r, args, sp)
}

// errStaged closes the pipe from the kennel once stage is over: the
// kennel's command then stops at its next write.
var errStaged = errors.New("the stage is over")

// stream runs git with args in r's kennel and stages what it prints (a
// bundle) as it comes, through a pipe; the goroutine that runs the
// kennel's command is waited for before stream returns.
func (m *Mirror) stream(ctx context.Context, r Ref, args []string, sp stageSpec) (*Staged, error) {
	pr, pw := io.Pipe()
	var kerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		_, kerr = m.git.Run(ctx, gitrun.Cmd{
			Workspace: r.Path,
			Dir:       r.dir(),
			Args:      args,
			Stdout:    pw,
			Timeout:   m.cfg.TransferTimeout,
		})
		pw.CloseWithError(kerr) // nil: the end of the bundle
	})
	s, err := m.stage(ctx, sp, pr)
	pr.CloseWithError(errStaged)
	wg.Wait()
	switch {
	case kerr != nil && !errors.Is(kerr, errStaged):
		// The kennel's failure is the cause of stage's, if any.
		s.Drop()
		return nil, fmt.Errorf("bundle in the kennel: %w", kerr)
	case err != nil:
		return nil, err
	case kerr != nil:
		// stage was over, index-pack content, while the kennel wrote on.
		s.Drop()
		return nil, fmt.Errorf("data after the bundle's pack: %w", ErrBadBundle)
	}
	return s, nil
}

// setRef points ref at sha.
func (m *Mirror) setRef(ctx context.Context, dir, ref, sha string) error {
	_, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"update-ref", "-m", "fetch", ref, sha}})
	return err
}

// kennelGit runs a short git command in r's kennel and returns its
// trimmed stdout.
func (m *Mirror) kennelGit(ctx context.Context, r Ref, args ...string) (string, error) {
	out, err := m.git.Run(ctx, gitrun.Cmd{Workspace: r.Path, Dir: r.dir(), Args: args, MaxOutput: 4 << 10})
	return strings.TrimSpace(out.Stdout), err
}

// kennelTmp is where SendBase writes a bundle in the kennel (its /tmp, a
// tmpfs of its own).
const kennelTmp = "/tmp"

// SendBase copies ref (e.g. refs/remotes/origin/main) from the mirror into
// the workspace's repository in the kennel as kennelRef (forced), for a
// follow-up task that rebases there. The whole history of ref crosses as a
// bundle on the exec's stdin, into a temporary file in the kennel that is
// removed afterwards; r.Branch and r.Base are not used.
func (m *Mirror) SendBase(ctx context.Context, r Ref, ref, kennelRef string) error {
	op := "mirror: send " + ref
	if r.Branch == "" {
		r.Branch = "unused"
	}
	if err := errors.Join(r.check(), checkRef(ref), checkRef(kennelRef)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, r.Workspace)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	if err := m.sendLocked(ctx, r, ref, kennelRef); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

func (m *Mirror) sendLocked(ctx context.Context, r Ref, ref, kennelRef string) error {
	dir, err := m.existing(r.Workspace)
	if err != nil {
		return err
	}
	if _, err := m.resolve(ctx, dir, ref); err != nil {
		return err
	}
	// git writes NAME.lock and renames it: the bundle is opened once made.
	bundle := filepath.Join(m.tmpDir(), "send-"+strings.ToLower(rand.Text())+".bundle")
	defer os.Remove(bundle)
	if _, err := m.hostGit(ctx, hostCmd{gitDir: dir, timeout: m.cfg.TransferTimeout, args: []string{"bundle", "create", "-q", bundle, ref}}); err != nil {
		return err
	}
	f, err := os.Open(bundle)
	if err != nil {
		return err
	}
	defer f.Close()

	name := path.Join(kennelTmp, "fetch-send-"+strings.ToLower(rand.Text())+".bundle")
	defer func() {
		// Always remove it, also after a cancellation.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		res, err := m.cfg.Kennel.Exec(cctx, kennel.ExecSpec{Workspace: r.Path, Dir: "/", Argv: []string{"rm", "-f", "--", name}, Timeout: time.Minute}, nil)
		if err != nil || res.ExitCode != 0 {
			m.log.Warn("mirror: remove the bundle in the kennel", logWorkspace, r.Workspace, logErr, err, "exit", res.ExitCode)
		}
	}()
	res, err := m.cfg.Kennel.Exec(ctx, kennel.ExecSpec{
		Workspace: r.Path,
		Dir:       "/",
		Argv:      []string{"dd", "of=" + name, "bs=1M", "conv=excl", "status=none"},
		Env:       []string{"LC_ALL=C"},
		Stdin:     f,
		Timeout:   m.cfg.TransferTimeout,
	}, nil)
	if err != nil {
		return fmt.Errorf("write the bundle in the kennel: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("write the bundle in the kennel: dd: exit code %d: %s", res.ExitCode, strings.TrimSpace(string(res.StderrTail)))
	}
	if _, err := m.git.Run(ctx, gitrun.Cmd{
		Workspace: r.Path,
		Dir:       r.dir(),
		Args:      []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", name, "+" + ref + ":" + kennelRef},
		Timeout:   m.cfg.TransferTimeout,
	}); err != nil {
		return fmt.Errorf("fetch the bundle in the kennel: %w", err)
	}
	return nil
}
