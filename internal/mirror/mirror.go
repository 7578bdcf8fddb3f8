package mirror

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/trust"
)

// Defaults for Config fields left zero.
const (
	// DefaultMaxBundle bounds a bundle out of a kennel.
	DefaultMaxBundle = 1 << 30
	// DefaultTimeout bounds one local git command.
	DefaultTimeout = 2 * time.Minute
	// DefaultTransferTimeout bounds a transfer: a bundle out of or into a
	// kennel, a fetch or push over the network.
	DefaultTransferTimeout = 10 * time.Minute
	// DefaultMaxScan bounds what a secret scan reads.
	DefaultMaxScan = 64 << 20
)

// Identity is a git author or committer.
type Identity struct {
	Name  string
	Email string
}

// DefaultCommitter commits what Rebase replays.
var DefaultCommitter = Identity{Name: "Fetch", Email: "fetch@localhost"}

// SecretFinder finds secrets in text without returning them;
// *redact.Redactor implements it.
type SecretFinder interface {
	Find(text string) []redact.Finding
}

// Config configures a Mirror.
type Config struct {
	// Root holds one bare repository per workspace (NAME.git), an empty
	// home for git (.home) and temporary files (.tmp); e.g.
	// $FETCH_DATA_DIR/repos. Created when missing.
	Root string
	// Kennel runs git (and dd) in a workspace's kennel; *kennel.Kennel.
	Kennel gitrun.Exec
	// Secrets finds secrets for Scan.
	Secrets SecretFinder
	// Logger; slog.DiscardHandler when nil.
	Logger *slog.Logger
	// MaxBundle bounds a bundle out of a kennel (staged, taken or
	// imported); DefaultMaxBundle when 0.
	MaxBundle int64
	// MaxScan bounds what a secret scan (Scan, Staged.Scan) reads of a
	// range: the patches of its commits, and, apart, their commit objects;
	// DefaultMaxScan when 0. Work over it is not scanned, nor taken
	// (ErrScanIncomplete).
	MaxScan int
	// Timeout bounds a local git command; DefaultTimeout when 0.
	Timeout time.Duration
	// TransferTimeout bounds a transfer; DefaultTransferTimeout when 0.
	TransferTimeout time.Duration
	// Committer commits rebased commits; DefaultCommitter when empty.
	Committer Identity
	// Now dates rebased commits; time.Now when nil.
	Now func() time.Time
	// CA is what host git trusts for HTTPS besides the system's
	// authorities (a GitHub Enterprise server's private CA), given on
	// git's command line.
	CA trust.CA
}

// Mirror manages the bare repositories.
type Mirror struct {
	cfg  Config
	git  *gitrun.Git
	log  *slog.Logger
	mu   sync.Mutex
	busy map[string]chan struct{} // per workspace: a token held by the call writing it
}

// New returns a Mirror; it touches nothing until a method needs it.
func New(cfg Config) (*Mirror, error) {
	if cfg.Root == "" || !filepath.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("mirror: root %q: want an absolute path: %w", cfg.Root, ErrInvalid)
	}
	if cfg.Kennel == nil {
		return nil, fmt.Errorf("mirror: no kennel: %w", ErrInvalid)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBundle <= 0 {
		cfg.MaxBundle = DefaultMaxBundle
	}
	if cfg.MaxScan <= 0 {
		cfg.MaxScan = DefaultMaxScan
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.TransferTimeout <= 0 {
		cfg.TransferTimeout = DefaultTransferTimeout
	}
	if cfg.Committer == (Identity{}) {
		cfg.Committer = DefaultCommitter
	}
	if err := checkIdentity(cfg.Committer); err != nil {
		return nil, fmt.Errorf("mirror: committer: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Root = filepath.Clean(cfg.Root)
	return &Mirror{cfg: cfg, git: gitrun.New(cfg.Kennel), log: cfg.Logger, busy: map[string]chan struct{}{}}, nil
}

// lock takes the workspace's lock, or gives up with ctx.
func (m *Mirror) lock(ctx context.Context, ws string) (unlock func(), err error) {
	m.mu.Lock()
	ch := m.busy[ws]
	if ch == nil {
		ch = make(chan struct{}, 1)
		m.busy[ws] = ch
	}
	m.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for workspace %s: %w", ws, context.Cause(ctx))
	}
}

// nameRE is what a workspace name may be (package workspace allows less).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

func checkName(ws string) error {
	if !nameRE.MatchString(ws) || strings.Contains(ws, "..") {
		return fmt.Errorf("workspace name %q: %w", ws, ErrInvalid)
	}
	return nil
}

// branchRE is a conservative branch name: what check-ref-format accepts,
// minus anything a shell, an option parser or a refspec could misread.
var branchRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`)

func checkBranch(b string) error {
	bad := !branchRE.MatchString(b) || len(b) > 200 || strings.Contains(b, "..") || strings.Contains(b, "//") ||
		strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") || strings.Contains(b, "/.") ||
		strings.Contains(b, ".lock/") || b == "HEAD"
	if bad {
		return fmt.Errorf("branch %q: %w", b, ErrInvalid)
	}
	return nil
}

// checkRef accepts a full ref name under refs/.
func checkRef(r string) error {
	b, ok := strings.CutPrefix(r, "refs/")
	if !ok || checkBranch(b) != nil {
		return fmt.Errorf("ref %q: want refs/...: %w", r, ErrInvalid)
	}
	return nil
}

var shaRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

func checkSHA(s string) error {
	if !shaRE.MatchString(s) {
		return fmt.Errorf("commit %q: want a full hex object name: %w", s, ErrInvalid)
	}
	return nil
}

// checkRev accepts a full ref name or a full object name.
func checkRev(r string) error {
	if checkSHA(r) == nil || checkRef(r) == nil {
		return nil
	}
	return fmt.Errorf("revision %q: want refs/... or a full object name: %w", r, ErrInvalid)
}

func checkIdentity(id Identity) error {
	if id.Name == "" || id.Email == "" || strings.ContainsAny(id.Name+id.Email, "<>\n\x00") {
		return fmt.Errorf("identity %q <%s>: %w", id.Name, id.Email, ErrInvalid)
	}
	return nil
}

// dir is the workspace's repository.
func (m *Mirror) dir(ws string) string { return filepath.Join(m.cfg.Root, ws+".git") }

func (m *Mirror) home() string   { return filepath.Join(m.cfg.Root, ".home") }
func (m *Mirror) tmpDir() string { return filepath.Join(m.cfg.Root, ".tmp") }

// repoConfig is the whole configuration of a mirror repository.
var repoConfig = [][2]string{
	{"core.bare", "true"},
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.logAllRefUpdates", "true"},
	{"transfer.fsckObjects", "true"},
	{"fetch.fsckObjects", "true"},
	{"receive.fsckObjects", "true"},
	{"gc.auto", "0"},
	{"protocol.ext.allow", "never"},
	{"credential.helper", ""},
}

// prepare makes Root, its home and its temporary directory.
func (m *Mirror) prepare() error {
	for _, d := range []string{m.cfg.Root, m.home(), m.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// ensure returns the workspace's repository, creating it when missing:
// made under .tmp, configured, then renamed into place.
func (m *Mirror) ensure(ctx context.Context, ws string) (string, error) {
	dir := m.dir(ws)
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
		return dir, nil
	case err == nil:
		return "", fmt.Errorf("%s is not a directory", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if err := m.prepare(); err != nil {
		return "", err
	}
	tmp, err := m.newRepo(ctx, "init-")
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("publish repository: %w", err)
	}
	m.log.Info("mirror: repository created", logWorkspace, ws)
	return dir, nil
}

// newRepo makes a configured bare repository under .tmp.
func (m *Mirror) newRepo(ctx context.Context, prefix string) (string, error) {
	if err := m.prepare(); err != nil {
		return "", err
	}
	tmp := filepath.Join(m.tmpDir(), prefix+strings.ToLower(rand.Text()))
	if _, err := m.hostGit(ctx, hostCmd{args: []string{"init", "-q", "--bare", "--template=", tmp}}); err != nil {
		return "", err
	}
	// The settings are appended as text, one git process where a `git
	// config` each cost ten: git reads a repeated section as one, and
	// the last value of a key wins.
	if err := appendConfig(filepath.Join(tmp, "config"), repoConfig); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// appendConfig appends settings (section.key, value; constants, none
// needing quotes) to the git configuration file at path.
func appendConfig(path string, settings [][2]string) error {
	var b strings.Builder
	for _, kv := range settings {
		i, j := strings.Index(kv[0], "."), strings.LastIndex(kv[0], ".")
		if i <= 0 || j == len(kv[0])-1 || strings.ContainsAny(kv[0]+kv[1], "\"#;\\\n[]") {
			return fmt.Errorf("mirror: config %q: %w", kv[0], ErrInvalid)
		}
		header := kv[0][:i]
		if i < j { // section.subsection.key
			header += ` "` + kv[0][i+1:j] + `"`
		}
		fmt.Fprintf(&b, "[%s]\n\t%s = %s\n", header, kv[0][j+1:], kv[1])
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// existing returns the workspace's repository, or ErrNotFound.
func (m *Mirror) existing(ws string) (string, error) {
	dir := m.dir(ws)
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no mirror of workspace %s: %w", ws, ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return dir, nil
}

// Delete removes the workspace's mirror; a missing one is success.
func (m *Mirror) Delete(ctx context.Context, ws string) error {
	if err := checkName(ws); err != nil {
		return fmt.Errorf("mirror: delete: %w", err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return fmt.Errorf("mirror: delete: %w", err)
	}
	defer unlock()
	if err := os.RemoveAll(m.dir(ws)); err != nil {
		return fmt.Errorf("mirror: delete %s: %w", ws, err)
	}
	return nil
}

// Remove deletes a branch of the workspace's mirror; a missing branch (or
// mirror) is success.
func (m *Mirror) Remove(ctx context.Context, ws, branch string) error {
	op := "mirror: remove branch"
	if err := errors.Join(checkName(ws), checkBranch(branch)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.existing(ws)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if _, err := m.resolve(ctx, dir, "refs/heads/"+branch); errors.Is(err, ErrNotFound) {
		return nil
	}
	if _, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"update-ref", "-d", "refs/heads/" + branch}}); err != nil {
		return fmt.Errorf("%s %s: %w", op, branch, err)
	}
	return nil
}

// resolve returns the commit rev names in dir, or ErrNotFound.
func (m *Mirror) resolve(ctx context.Context, dir, rev string) (string, error) {
	out, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		var ge *gitrun.GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", fmt.Errorf("%s: %w", rev, ErrNotFound)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Log keys.
const (
	logWorkspace = "workspace"
	logBranch    = "branch"
	logErr       = "err"
)
