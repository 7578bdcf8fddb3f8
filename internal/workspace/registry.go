package workspace

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/trust"
	"github.com/fetch-dev/fetch/kennel"
)

// Info describes one workspace.
type Info struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// ProjectType is what the files say the project is ("go", "node",
	// "python", "rust", …), empty when unknown.
	ProjectType string `json:"project_type,omitempty"`
	// Branch is the checked-out branch, empty when HEAD is detached or the
	// directory is not a git repository.
	Branch string `json:"branch,omitempty"`
	// Dirty: the work tree has uncommitted changes or untracked files.
	Dirty bool `json:"dirty"`
	// Problem says why git could not read the repository (in its kennel);
	// Branch and Dirty are then unknown.
	Problem string `json:"problem,omitempty"`
	// Engine is the Docker engine the workspace lives on, when it is not
	// the local one (FETCH_ENGINES).
	Engine string `json:"engine,omitempty"`
	// Asleep: the workspace's kennel is not running, and List does not
	// start it to run git: Branch is read from .git/HEAD as a plain file
	// (empty on another engine) and Dirty is unknown. Status starts it.
	Asleep bool `json:"asleep,omitempty"`
}

// Registry is the set of workspaces under one root directory.
type Registry struct {
	root   string
	log    *slog.Logger
	runAs  *user
	gitrun *gitrun.Git
	// awake runs git like gitrun, but only in a kennel that is running
	// (kennel.ExecSpec.IfRunning): reads that must not start one.
	awake *gitrun.Git
	// kennel is what gitrun runs in; Delete removes a workspace's
	// container through it.
	kennel gitrun.Exec
	// placement keeps workspaces on other engines (Placed); nil: all are
	// local directories.
	placement *Placement
	// ca is what host git trusts for HTTPS besides the system (TrustCA).
	ca trust.CA
}

// user is a numeric uid and gid.
type user struct{ uid, gid int }

// RunAs makes the registry give the workspaces it creates and clones to
// uid:gid when it runs as root, so that they belong to the kennel's user,
// who must write them (the kennel never runs as root). Host git builds a
// workspace as Fetch's own user in a staging directory that only Fetch can
// reach (the workspaces folder may lie in a data directory closed to
// everyone else), and the finished tree is handed over before it is
// published. Without it, or when not root, files belong to the calling
// process. Call it before using the registry.
func (r *Registry) RunAs(uid, gid int) *Registry {
	if os.Geteuid() == 0 && uid != 0 {
		r.runAs = &user{uid, gid}
	}
	return r
}

// chown gives path (and with tree, everything under it) to the RunAs user.
func (r *Registry) chown(path string, tree bool) error {
	if r.runAs == nil {
		return nil
	}
	if !tree {
		return os.Lchown(path, r.runAs.uid, r.runAs.gid)
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, r.runAs.uid, r.runAs.gid)
	})
}

// New returns the registry of the workspaces under root (FETCH_WORKSPACES).
// It touches nothing on disk; the root is created by Create and Clone when
// missing. Git on existing workspaces needs InKennel.
func New(root string, logger *slog.Logger) *Registry {
	return &Registry{root: filepath.Clean(root), log: logger}
}

// TrustCA makes host git (a clone) trust ca besides the system's
// authorities, given on its command line. Call it before using the
// registry.
func (r *Registry) TrustCA(ca trust.CA) *Registry {
	r.ca = ca
	return r
}

// InKennel makes the registry run git on existing workspaces in their
// kennels through k (*kennel.Kennel): the host never runs git in a tree
// the kennel writes. Without it those operations fail with ErrNoKennel.
// Call it before using the registry.
func (r *Registry) InKennel(k gitrun.Exec) *Registry {
	r.gitrun = gitrun.New(k)
	r.awake = gitrun.New(ifRunning{k})
	r.kennel = k
	return r
}

// ifRunning runs execs only in kennels that are running already.
type ifRunning struct{ k gitrun.Exec }

func (i ifRunning) Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error) {
	spec.IfRunning = true
	return i.k.Exec(ctx, spec, fn)
}

// remover is what Delete needs of the kennel (*kennel.Kennel): the
// workspace's container goes with the workspace.
type remover interface {
	Remove(ctx context.Context, workspace string) error
}

// HasKennel reports whether InKennel was called.
func (r *Registry) HasKennel() bool { return r.gitrun != nil }

// Root is the directory holding the workspaces.
func (r *Registry) Root() string { return r.root }

// Path returns the absolute path of the workspace name, which must exist.
// A workspace on another engine has the same path, in its kennel only.
func (r *Registry) Path(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	p := filepath.Join(r.root, name)
	if r.placement != nil {
		if _, err := os.Lstat(p); err != nil {
			// Not here: on another engine, or nowhere.
			if e, err := r.engineOf(context.Background(), name); err != nil {
				return "", err
			} else if e != "" {
				return p, nil
			}
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Where Fetch looked: a workspace is a directory under the root.
		return "", fmt.Errorf("workspace %q: %w in %s", name, ErrNotFound, r.root)
	case err != nil:
		return "", fmt.Errorf("workspace %q: %w", name, err)
	case !fi.IsDir():
		// Symbolic links are refused too: a workspace is a directory under
		// the root, never a way out of it.
		return "", fmt.Errorf("workspace %q is not a directory: %w", name, ErrNotFound)
	}
	return p, nil
}

// List returns the workspaces, sorted by name. Entries under the root that
// are not valid workspace names or not directories are skipped. It starts
// no kennel: a workspace whose kennel sleeps is listed Asleep.
func (r *Registry) List(ctx context.Context) ([]Info, error) {
	entries, err := os.ReadDir(r.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: list: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || ValidateName(e.Name()) != nil {
			continue
		}
		out = append(out, r.info(ctx, e.Name()))
	}
	remote, err := r.remoteNames(ctx)
	if err != nil {
		return out, fmt.Errorf("workspace: list: %w", err)
	}
	for _, n := range remote {
		out = append(out, r.info(ctx, n))
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Names lists the workspaces' names, sorted, without looking into them
// (List reads each one's git state in its kennel).
func (r *Registry) Names(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(r.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("workspace: names: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidateName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	remote, err := r.remoteNames(ctx)
	if err != nil {
		return out, fmt.Errorf("workspace: names: %w", err)
	}
	out = append(out, remote...)
	slices.Sort(out)
	return out, nil
}

// Get returns one workspace's Info.
func (r *Registry) Get(ctx context.Context, name string) (Info, error) {
	if _, err := r.Path(name); err != nil {
		return Info{}, err
	}
	return r.info(ctx, name), nil
}

// info describes a workspace, with git run in its kennel if that runs
// (Asleep otherwise). A repository git cannot read (a broken or planted
// .git, no kennel to run git in) is still listed, with the Problem.
func (r *Registry) info(ctx context.Context, name string) Info {
	p := filepath.Join(r.root, name)
	info := Info{Name: name, Path: p}
	if e, _ := r.engineOf(ctx, name); e != "" {
		// Only its kennel sees it; it was made a repository.
		info.Engine = e
	} else {
		info.ProjectType = projectType(p)
		if !isRepo(p) {
			return info
		}
	}
	if r.awake == nil {
		info.Problem = fmt.Sprintf("git status: %v", ErrNoKennel)
		return info
	}
	out, err := r.awake.Run(ctx, gitrun.Cmd{Workspace: p, Args: []string{"status", "--porcelain=v2", "--branch", "--untracked-files=normal"}, MaxOutput: maxGitOutput})
	st := out.Stdout
	if err == nil && out.Truncated {
		err = fmt.Errorf("git status: output over %d bytes", maxGitOutput)
	}
	if errors.Is(err, kennel.ErrAsleep) {
		info.Asleep = true
		if info.Engine == "" {
			info.Branch = headBranch(p)
		}
		return info
	}
	if err != nil {
		r.log.Warn("workspace: git status", "workspace", name, "err", err)
		info.Problem = err.Error()
		return info
	}
	for _, line := range strings.Split(st, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# branch.head "):
			if b := strings.TrimPrefix(line, "# branch.head "); b != "(detached)" {
				info.Branch = b
			}
		case strings.HasPrefix(line, "# "):
		default:
			info.Dirty = true
		}
	}
	return info
}

// fresh is the Info of a workspace just built in dir, read before it is
// published (no kennel has seen it yet, so host git may read it): its
// branch, and clean.
func (r *Registry) fresh(ctx context.Context, dir, name string) Info {
	info := Info{Name: name, Path: filepath.Join(r.root, name), ProjectType: projectType(dir)}
	if b, err := r.hostGit(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		info.Branch = strings.TrimSpace(b)
	}
	return info
}

// headMax bounds what is read of .git/HEAD.
const headMax = 512

// headBranch is the branch .git/HEAD names ("ref: refs/heads/NAME"), read
// as a plain file: the kennel writes it, so it is read through an os.Root
// (no way out of the workspace), only when it is a regular file under a
// .git directory, at most headMax bytes, and the name is taken only when
// git would take it (no control characters, spaces or "..").
// "" when HEAD is detached, missing or anything else.
func headBranch(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	if fi, err := root.Lstat(".git"); err != nil || !fi.IsDir() {
		return ""
	}
	if fi, err := root.Lstat(".git/HEAD"); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := root.OpenFile(".git/HEAD", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, headMax+1))
	if err != nil || len(b) > headMax {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSuffix(string(b), "\n"), "ref: refs/heads/")
	if !ok || ref == "" || strings.Contains(ref, "..") || strings.ContainsFunc(ref, func(c rune) bool {
		return c <= ' ' || c == 0x7f || c == '~' || c == '^' || c == ':' || c == '\\' || c == '?' || c == '*' || c == '['
	}) {
		return ""
	}
	return ref
}

func isRepo(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// projectMarkers name a project type by a file at the top of the tree,
// checked in order.
var projectMarkers = []struct{ file, kind string }{
	{"go.mod", "go"},
	{"Cargo.toml", "rust"},
	{"package.json", "node"},
	{"pyproject.toml", "python"},
	{"setup.py", "python"},
	{"requirements.txt", "python"},
	{"pom.xml", "java"},
	{"build.gradle", "java"},
	{"build.gradle.kts", "kotlin"},
	{"Gemfile", "ruby"},
	{"composer.json", "php"},
	{"mix.exs", "elixir"},
	{"CMakeLists.txt", "c++"},
	{"Makefile", "make"},
}

func projectType(dir string) string {
	for _, m := range projectMarkers {
		// Lstat: the kennel writes the tree; a marker must be a file of
		// its own, not a link to anywhere.
		if fi, err := os.Lstat(filepath.Join(dir, m.file)); err == nil && fi.Mode().IsRegular() {
			return m.kind
		}
	}
	return ""
}

// ProjectType is the kind of project at the top of workspace name ("go",
// "node", …), from its marker files; "" when unknown or when the
// workspace is on another engine (nothing of it is here).
func (r *Registry) ProjectType(name string) string {
	if ValidateName(name) != nil {
		return ""
	}
	return projectType(filepath.Join(r.root, name))
}

//go:embed all:templates
var templates embed.FS

// Templates lists the template names Create accepts (besides "").
func Templates() []string {
	entries, _ := templates.ReadDir("templates")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// Create makes a new workspace: a git repository on branch main with the
// template's files (template "" is "empty": a README) in a first commit, so
// that tasks can branch from it.
func (r *Registry) Create(ctx context.Context, name, template string) (Info, error) {
	if err := ValidateName(name); err != nil {
		return Info{}, fmt.Errorf("workspace: create: %w", err)
	}
	if template == "" {
		template = "empty"
	}
	if !slices.Contains(Templates(), template) {
		return Info{}, fmt.Errorf("workspace: create %s: template %q (have %s): %w", name, template, strings.Join(Templates(), ", "), ErrUnknownTemplate)
	}
	tmp, err := r.staging(name)
	if err != nil {
		return Info{}, fmt.Errorf("workspace: create %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, name)
	if err := copyTemplate(template, dir); err != nil {
		return Info{}, fmt.Errorf("workspace: create %s: %w", name, err)
	}
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "--all"},
		append(slices.Clone(identity), "commit", "--quiet", "--no-verify", "-m", "Create workspace "+name+" from template "+template),
	}
	for _, args := range steps {
		if _, err := r.hostGit(ctx, dir, args...); err != nil {
			return Info{}, fmt.Errorf("workspace: create %s: %w", name, err)
		}
	}
	info := r.fresh(ctx, dir, name)
	if err := r.chown(dir, true); err != nil {
		return Info{}, fmt.Errorf("workspace: create %s: %w", name, err)
	}
	if info.Engine, err = r.publish(ctx, dir, name); err != nil {
		return Info{}, fmt.Errorf("workspace: create %s: %w", name, err)
	}
	r.log.Info("workspace created", "workspace", name, "template", template)
	return info, nil
}

func copyTemplate(template, dst string) error {
	src := path.Join("templates", template)
	return fs.WalkDir(templates, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, src), "/")
		target := filepath.Join(dst, filepath.FromSlash(strings.TrimSuffix(rel, ".tmpl")))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Clone makes a new workspace from a git URL: https://, ssh://, file://
// or the scp-like user@host:path form of ssh. The clone goes to a hidden
// staging directory first, so a failed clone leaves nothing behind. Git
// runs as Fetch's own user, so a file:// source is read with Fetch's
// rights: callers acting for someone who may not read this machine's
// files (the agent) accept remote URLs only (ValidateRemoteURL).
func (r *Registry) Clone(ctx context.Context, name, rawURL string) (Info, error) {
	return r.clone(ctx, name, rawURL)
}

// Copy makes a new workspace from the git repository at dir on this
// machine (fetch workspace add at the terminal): its committed history is
// cloned (file://), dir is left as it is, and the copy is given to RunAs's
// user.
func (r *Registry) Copy(ctx context.Context, name, dir string) (Info, error) {
	if !filepath.IsAbs(dir) {
		return Info{}, fmt.Errorf("workspace: copy %s: %q is not an absolute path: %w", name, dir, ErrInvalidURL)
	}
	return r.clone(ctx, name, (&url.URL{Scheme: "file", Path: filepath.Clean(dir)}).String())
}

func (r *Registry) clone(ctx context.Context, name, rawURL string) (Info, error) {
	if err := ValidateName(name); err != nil {
		return Info{}, fmt.Errorf("workspace: clone: %w", err)
	}
	if err := ValidateURL(rawURL); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	if err := r.outsideWorkspaces(rawURL); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	tmp, err := r.staging(name)
	if err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, name)
	// Only the transport the URL names; file:// only when asked for, so
	// that nothing in the clone reaches the host's files.
	proto := []string{"-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.ssh.allow=always", "-c", "protocol.file.allow=never"}
	if strings.HasPrefix(rawURL, "file://") {
		proto[len(proto)-1] = "protocol.file.allow=always"
	}
	var env []string
	if strings.HasPrefix(rawURL, "file://") {
		// Host git runs as Fetch's user, and the owner's repository may
		// belong to somebody else (root's clone of a user's repository):
		// git's ownership check is lifted for that one source, which the
		// owner named and which lies outside the kennels' reach
		// (outsideWorkspaces), with the hardening options still on. Git
		// 2.39 takes safe.directory only from the global configuration, so
		// the clone gets one of its own, holding nothing else.
		if env, err = r.trustSource(ctx, tmp, rawURL); err != nil {
			return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
		}
	}
	args := append(proto, "clone", "--quiet", "--no-recurse-submodules", "--template=", "--", rawURL, dir)
	if _, err := r.hostGitEnv(ctx, tmp, env, args...); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	// The clone is Fetch's own, fresh from git clone (no hooks: --template=).
	if _, err := r.hostGit(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, ErrNoCommit)
	}
	info := r.fresh(ctx, dir, name)
	if err := r.chown(dir, true); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	if info.Engine, err = r.publish(ctx, dir, name); err != nil {
		return Info{}, fmt.Errorf("workspace: clone %s: %w", name, err)
	}
	r.log.Info("workspace cloned", "workspace", name, "url", gitrun.RedactURL(rawURL))
	return info, nil
}

// ValidateRemoteURL is ValidateURL without file://: the URLs a clone may
// take from someone who is not at this machine (the agent, the chat).
func ValidateRemoteURL(raw string) error {
	if err := ValidateURL(raw); err != nil {
		return err
	}
	if strings.HasPrefix(strings.ToLower(raw), "file:") {
		return fmt.Errorf("%q is a path on Fetch's machine: from the chat only https:// and ssh:// URLs are cloned (a local repository is added at the terminal: fetch workspace add NAME PATH): %w", raw, ErrInvalidURL)
	}
	return nil
}

// ValidateURL accepts https://, ssh:// and file:// URLs and ssh's
// user@host:path form; the error wraps ErrInvalidURL.
func ValidateURL(raw string) error {
	if raw == "" || strings.HasPrefix(raw, "-") || strings.ContainsAny(raw, "\x00\n\r \t") {
		return fmt.Errorf("%q: %w", raw, ErrInvalidURL)
	}
	if !strings.Contains(raw, "://") {
		// scp-like: user@host:path, where host has no slash before the colon.
		user, rest, ok := strings.Cut(raw, "@")
		host, p, ok2 := strings.Cut(rest, ":")
		if ok && ok2 && user != "" && host != "" && p != "" && !strings.Contains(host, "/") && !strings.HasPrefix(host, "-") {
			return nil
		}
		return fmt.Errorf("%q is not a URL (use https://, ssh://, file:// or user@host:path): %w", raw, ErrInvalidURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %w", raw, ErrInvalidURL)
	}
	switch u.Scheme {
	case "https", "ssh":
		if u.Host == "" || strings.HasPrefix(u.Host, "-") {
			return fmt.Errorf("%q has no host: %w", raw, ErrInvalidURL)
		}
	case "file":
		if u.Path == "" {
			return fmt.Errorf("%q has no path: %w", raw, ErrInvalidURL)
		}
	default:
		return fmt.Errorf("scheme %q is not allowed (https, ssh or file only): %w", u.Scheme, ErrInvalidURL)
	}
	return nil
}

// outsideWorkspaces refuses a file:// source inside the workspaces root:
// a kennel writes those repositories, and a clone runs git (upload-pack)
// on the host against its source.
func (r *Registry) outsideWorkspaces(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "file" {
		return nil
	}
	root, err := filepath.EvalSymlinks(r.root)
	if err != nil {
		root = filepath.Clean(r.root)
	}
	src, err := filepath.EvalSymlinks(u.Path)
	if err != nil {
		src = filepath.Clean(u.Path)
	}
	if rel, err := filepath.Rel(root, src); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%q is inside the workspaces folder, which the kennels write: clone from its remote instead: %w", rawURL, ErrInvalidURL)
	}
	return nil
}

// staging makes a hidden directory under the root to build a workspace in,
// after checking that the name is free.
func (r *Registry) staging(name string) (string, error) {
	if err := os.MkdirAll(r.root, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Lstat(filepath.Join(r.root, name)); err == nil {
		return "", fmt.Errorf("%q: %w", name, ErrExists)
	}
	return os.MkdirTemp(r.root, ".new-"+name+"-")
}

// publish moves a built workspace to its place: a directory under the root,
// or, when the placement chooses another engine, a volume there (upload).
// A name taken meanwhile is ErrExists. It returns the engine ("" local).
func (r *Registry) publish(ctx context.Context, dir, name string) (string, error) {
	final := filepath.Join(r.root, name)
	if _, err := os.Lstat(final); err == nil {
		return "", fmt.Errorf("%q: %w", name, ErrExists)
	}
	if e, err := r.engineOf(ctx, name); err != nil {
		return "", err
	} else if e != "" {
		return "", fmt.Errorf("%q (on engine %s): %w", name, e, ErrExists)
	}
	if r.placement != nil && r.placement.choose != nil {
		engine, err := r.placement.choose(ctx)
		if err != nil {
			return "", err
		}
		if engine != "" {
			return engine, r.upload(ctx, dir, name, engine)
		}
	}
	return "", os.Rename(dir, final)
}

// Delete removes a workspace and everything in it. The agent asks the
// owner's approval first, and refusing the conversation's active workspace
// is the caller's check.
func (r *Registry) Delete(ctx context.Context, name string) error {
	p, err := r.Path(name)
	if err != nil {
		return fmt.Errorf("workspace: delete: %w", err)
	}
	// Its container first: nothing runs in it any more.
	if k, ok := r.kennel.(remover); ok {
		if err := k.Remove(ctx, p); err != nil {
			r.log.Warn("remove the workspace's kennel", "workspace", name, "err", err)
		}
	}
	if e, err := r.engineOf(ctx, name); err != nil {
		return fmt.Errorf("workspace: delete: %w", err)
	} else if e != "" {
		// On another engine: its volume is the workspace.
		if k, ok := r.kennel.(volumeRemover); ok {
			if err := k.RemoveVolume(ctx, p); err != nil {
				return fmt.Errorf("workspace: delete %s on engine %s: %w", name, e, err)
			}
		}
		if err := r.placement.unplace(ctx, name); err != nil {
			return fmt.Errorf("workspace: delete %s: %w", name, err)
		}
		r.log.Info("workspace deleted", "workspace", name, "engine", e)
		return nil
	}
	// Move it aside first so that the name is free at once and a partial
	// removal never looks like a workspace.
	trash, err := os.MkdirTemp(r.root, ".delete-"+name+"-")
	if err != nil {
		return fmt.Errorf("workspace: delete %s: %w", name, err)
	}
	if err := os.Rename(p, filepath.Join(trash, name)); err != nil {
		os.Remove(trash)
		return fmt.Errorf("workspace: delete %s: %w", name, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("workspace: delete %s: %w", name, err)
	}
	r.log.Info("workspace deleted", "workspace", name)
	return nil
}
