package mirror

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
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
// its tip. The objects cross as a bundle on the exec's stdout — only what
// the mirror lacks when it has r.Base, the whole history otherwise — and
// are fsck'd on their way in (see the package doc). On any error the
// mirror's refs are unchanged.
func (m *Mirror) Import(ctx context.Context, r Ref) (string, error) {
	op := "mirror: import " + r.Branch
	if err := r.check(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, r.Workspace)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	sha, err := m.importLocked(ctx, r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	m.log.Info("mirror: imported", logWorkspace, r.Workspace, logBranch, r.Branch, "commit", sha)
	return sha, nil
}

func (m *Mirror) importLocked(ctx context.Context, r Ref) (string, error) {
	dir, err := m.ensure(ctx, r.Workspace)
	if err != nil {
		return "", err
	}
	ref := "refs/heads/" + r.Branch
	tip, err := m.kennelGit(ctx, r, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("branch in the kennel: %w", err)
	}
	if checkSHA(tip) != nil {
		return "", fmt.Errorf("branch in the kennel: odd commit name %q: %w", tip, ErrBadBundle)
	}
	if have, _ := m.resolve(ctx, dir, tip); have == tip {
		// The mirror has the commit (and, fsck'd on the way in, its
		// history): no bundle needed.
		return tip, m.setRef(ctx, dir, ref, tip)
	}
	args := []string{"bundle", "create", "-", ref}
	if r.Base != "" {
		if have, _ := m.resolve(ctx, dir, r.Base); have == r.Base {
			if _, err := m.kennelGit(ctx, r, "cat-file", "-e", r.Base+"^{commit}"); err == nil {
				args = append(args, "^"+r.Base)
			}
		}
	}

	f, err := os.CreateTemp(m.tmpDir(), "import-*.bundle")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	_, err = m.git.Run(ctx, gitrun.Cmd{
		Workspace: r.Path,
		Dir:       r.dir(),
		Args:      args,
		Stdout:    &limitWriter{w: f, max: m.cfg.MaxBundle},
		Timeout:   m.cfg.TransferTimeout,
	})
	if err != nil {
		return "", fmt.Errorf("bundle in the kennel: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := m.takeBundle(ctx, dir, f.Name(), ref, tip); err != nil {
		return "", err
	}
	return tip, nil
}

// takeBundle fetches ref from the bundle into the mirror through a
// scratch repository, so that the objects are fsck'd (see the package
// doc). The bundle must hold ref alone, at tip.
func (m *Mirror) takeBundle(ctx context.Context, dir, bundle, ref, tip string) error {
	scratch, err := m.newRepo(ctx, "scratch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	alternates := filepath.Join(scratch, "objects", "info", "alternates")
	if err := os.WriteFile(alternates, []byte(filepath.Join(dir, "objects")+"\n"), 0o600); err != nil {
		return err
	}
	// The header is read here rather than by `git bundle list-heads`, and
	// the bundle not verified apart: the fetch below verifies it (its
	// prerequisites, its pack) before it takes anything.
	heads, err := bundleHeads(bundle)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	if want := tip + " " + ref; len(heads) != 1 || heads[0] != want {
		return fmt.Errorf("bundle holds %q, want %q alone: %w", heads, want, ErrBadBundle)
	}
	if _, err := m.hostGit(ctx, hostCmd{gitDir: scratch, timeout: m.cfg.TransferTimeout,
		args: []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", bundle, "+" + ref + ":" + ref}}); err != nil {
		return fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	// Into the mirror over upload-pack: fetch.fsckObjects checks every
	// object the mirror lacks; the ref is updated only when all passed.
	if _, err := m.hostGit(ctx, hostCmd{gitDir: dir, timeout: m.cfg.TransferTimeout,
		args: []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", scratch, "+" + ref + ":" + ref}}); err != nil {
		return fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	got, err := m.resolve(ctx, dir, ref)
	if err != nil {
		return err
	}
	if got != tip {
		return fmt.Errorf("%s is at %s after the fetch, want %s: %w", ref, got, tip, ErrBadBundle)
	}
	return nil
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

// maxBundleHeader bounds a bundle's header (its signature, prerequisites
// and refs).
const maxBundleHeader = 64 << 10

// bundleHeads reads the "<object id> <ref>" lines of a v2 or v3 bundle's
// header (the prerequisites, "-<object id> …", and v3 capabilities are
// skipped).
func bundleHeads(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, maxBundleHeader))
	sig, err := r.ReadString('\n')
	if err != nil || sig != "# v2 git bundle\n" && sig != "# v3 git bundle\n" {
		return nil, fmt.Errorf("not a git bundle (%q)", strings.TrimSpace(sig))
	}
	var heads []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("bundle header: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return heads, nil
		case strings.HasPrefix(line, "-"), strings.HasPrefix(line, "@"):
		default:
			heads = append(heads, line)
		}
	}
}
