package shim

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// CmdWorktree makes a task's worktree on a new branch from the commit the
// repository's HEAD names, and keeps a pattern out of the repository's
// status (info/exclude):
//
//	fetch-shim worktree --repo DIR --path PATH --branch NAME --exclude PATTERN -- git [options...]
//
// It prints three lines, as `git rev-parse HEAD^{commit} --git-path
// info/exclude --symbolic-full-name HEAD` would in DIR: the base commit,
// the exclude file, and HEAD's full name ("HEAD" when detached). It prints
// them once the base is known, before the worktree is made: a failure
// with the lines printed is the worktree's, one without them is that
// there is no commit to branch from.
//
// `git worktree add -b` starts four git processes one after another (the
// command, branch, symbolic-ref, reset --hard), and reading the base one
// more. Here the shim reads HEAD and writes the worktree's administrative
// files itself (the layout `git worktree add` writes, documented in
// gitrepository-layout), and one `git checkout --force -b NAME BASE` in
// the new worktree makes the branch and its files. Where the repository
// is not of the plain kind it reads (see findGitDirs), or the worktree's
// name or path is taken, it runs rev-parse and `git worktree add` as
// before, so that git says what is wrong. The trailing arguments are the
// git command to run (git and its options).
const CmdWorktree = "worktree"

// WorktreeArgv is the argv of the worktree command; git is the git
// command (program and options) the command runs.
func WorktreeArgv(repo, path, branch, exclude string, git []string) []string {
	return append([]string{Path, CmdWorktree, "--repo", repo, "--path", path, "--branch", branch, "--exclude", exclude, "--"}, git...)
}

// worktreeSpec is a worktree command's arguments and the git it runs.
type worktreeSpec struct {
	repo, path, branch, exclude string
	git                         gitCmd
}

// worktreeName is a worktree's directory name the shim uses itself; git
// picks (and sanitizes) any other.
var worktreeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// makeWorktree carries out the worktree command and returns its exit code.
func makeWorktree(ctx context.Context, s worktreeSpec, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "fetch-shim: worktree: %v\n", err)
		return ExitFailed
	}
	d, base, head, fast := plainHead(s.repo)
	var exclude string
	if fast {
		exclude = filepath.Join(d.common, "info", "exclude")
	} else {
		var out bytes.Buffer
		if code := s.git.run(ctx, s.repo, nil, &out, stderr, "rev-parse", "HEAD^{commit}", "--git-path", "info/exclude", "--symbolic-full-name", "HEAD"); code != 0 {
			return code
		}
		lines := strings.Split(out.String(), "\n")
		if len(lines) < 3 || !IsObjectID(lines[0]) {
			return fail(fmt.Errorf("git rev-parse printed %.200q", out.String()))
		}
		base, exclude, head = lines[0], lines[1], lines[2]
		if !filepath.IsAbs(exclude) {
			exclude = filepath.Join(s.repo, exclude)
		}
	}
	if err := addLine(exclude, s.exclude); err != nil {
		return fail(fmt.Errorf("exclude %s: %w", s.exclude, err))
	}
	if _, err := fmt.Fprintf(stdout, "%s\n%s\n%s\n", base, exclude, head); err != nil {
		return fail(err)
	}
	if fast {
		code, err := linkWorktree(ctx, s, d, base, stderr)
		if !errors.Is(err, errUnusualRepo) {
			if err != nil {
				return fail(err)
			}
			return code
		}
	}
	return s.git.run(ctx, s.repo, nil, io.Discard, stderr, "worktree", "add", "--quiet", "-b", s.branch, "--", s.path, base)
}

// plainHead reads the repository of the work tree at dir and its HEAD
// when it is of the plain kind the shim reads itself (fast).
func plainHead(dir string) (d gitDirs, base, head string, fast bool) {
	d, err := findGitDirs(dir)
	if err != nil {
		return d, "", "", false
	}
	// Sparse checkouts and per-worktree configuration are copied to a
	// new worktree by git worktree add; the shim leaves them to it.
	cfg, err := os.ReadFile(filepath.Join(d.common, "config"))
	if err != nil || len(cfg) > 1<<20 {
		return d, "", "", false
	}
	lower := strings.ToLower(string(cfg))
	if strings.Contains(lower, "worktreeconfig") || strings.Contains(lower, "sparsecheckout") {
		return d, "", "", false
	}
	base, head, err = d.head()
	return d, base, head, err == nil
}

// linkWorktree makes the worktree at s.path on branch s.branch from base
// as `git worktree add` does, and returns the exit code of its checkout.
// errUnusualRepo (nothing made) asks for git worktree add instead.
func linkWorktree(ctx context.Context, s worktreeSpec, d gitDirs, base string, stderr io.Writer) (int, error) {
	name := filepath.Base(s.path)
	if !filepath.IsAbs(s.path) || !worktreeName.MatchString(name) {
		return 0, fmt.Errorf("%w: worktree path %q", errUnusualRepo, s.path)
	}
	if _, err := d.resolve("refs/heads/" + s.branch); !errors.Is(err, errNoRef) {
		return 0, fmt.Errorf("%w: branch %s: %v", errUnusualRepo, s.branch, err) // exists, or cannot tell: git says
	}
	admins := filepath.Join(d.common, "worktrees")
	if err := os.MkdirAll(admins, 0o777); err != nil {
		return 0, fmt.Errorf("%w: %w", errUnusualRepo, err)
	}
	admin := filepath.Join(admins, name)
	if err := os.Mkdir(admin, 0o777); err != nil {
		return 0, fmt.Errorf("%w: %w", errUnusualRepo, err) // taken: git picks another name
	}
	madePath := false
	undo := func() {
		os.RemoveAll(admin)
		if madePath {
			os.RemoveAll(s.path)
		}
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o777); err != nil {
		undo()
		return 0, fmt.Errorf("%w: %w", errUnusualRepo, err)
	}
	switch err := os.Mkdir(s.path, 0o777); {
	case err == nil:
		madePath = true
	case errors.Is(err, fs.ErrExist) && emptyDir(s.path):
	default:
		undo()
		return 0, fmt.Errorf("%w: worktree path: %v", errUnusualRepo, err) // git says what is there
	}
	if err := writeAdmin(admin, s.path, base); err != nil {
		undo()
		return 0, err
	}
	code := s.git.run(ctx, s.path, nil, io.Discard, stderr, "checkout", "--quiet", "--force", "-b", s.branch, base)
	if code != 0 {
		undo()
		return code, nil
	}
	// Made: prune may take it only once its path is gone.
	if err := os.Remove(filepath.Join(admin, "locked")); err != nil {
		return 0, err
	}
	return 0, nil
}

// writeAdmin writes a new worktree's administrative files (admin, under
// the common directory's worktrees/) and its .git file at path, with HEAD
// detached at base until the checkout moves it to the branch. It is
// locked while it is being made, as git worktree add locks it.
func writeAdmin(admin, path, base string) error {
	realPath, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	realAdmin, err := filepath.EvalSymlinks(admin)
	if err != nil {
		return err
	}
	files := []struct{ dir, name, text string }{
		{admin, "locked", "initializing\n"},
		{admin, "commondir", "../..\n"},
		{admin, "gitdir", filepath.Join(realPath, ".git") + "\n"},
		{admin, "HEAD", base + "\n"},
		{path, ".git", "gitdir: " + realAdmin + "\n"},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(f.dir, f.name), []byte(f.text), 0o666); err != nil {
			return err
		}
	}
	return nil
}

// emptyDir reports whether dir is a directory with nothing in it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// addLine adds line to file unless the file holds it as a line already,
// after a newline when the file does not end with one.
func addLine(file, line string) error {
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if l == line {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		return err
	}
	add := line + "\n"
	if len(b) > 0 && b[len(b)-1] != '\n' {
		add = "\n" + add
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteString(add)
	return errors.Join(err, f.Close())
}

// gitCmd is the git a worktree or bundle command runs: the program and
// its options (what follows "--"), and its environment.
type gitCmd struct {
	argv, env []string
}

// run runs git with args in dir and returns its exit code (127 when it
// could not start).
func (g gitCmd) run(ctx context.Context, dir string, stdin io.Reader, stdout, stderr io.Writer, args ...string) int {
	return runStep(ctx, append(slices.Clone(g.argv), args...), dir, g.env, stdin, stdout, stderr)
}

// gitCommand parses the arguments of the worktree or bundle command (cmd
// is args[0]) and runs it; its git runs with env, in dir for a bundle.
func gitCommand(ctx context.Context, args []string, dir string, env []string, stdout, stderr io.Writer) int {
	cmd := args[0]
	flags := flag.NewFlagSet("fetch-shim "+cmd, flag.ContinueOnError)
	flags.SetOutput(stderr)
	var s worktreeSpec
	var ref, not string
	switch cmd {
	case CmdWorktree:
		flags.StringVar(&s.repo, "repo", "", "the work tree whose HEAD the branch starts from")
		flags.StringVar(&s.path, "path", "", "the new worktree's absolute path")
		flags.StringVar(&s.branch, "branch", "", "the new branch's name")
		flags.StringVar(&s.exclude, "exclude", "", "a pattern for the repository's info/exclude")
	case CmdBundle:
		flags.StringVar(&ref, "ref", "", "the branch to bundle (refs/heads/NAME)")
		flags.StringVar(&not, "not", "", "the commit the bundle's receiver has")
	}
	if err := flags.Parse(args[1:]); err != nil {
		return ExitUsage
	}
	s.git = gitCmd{argv: flags.Args(), env: env}
	switch {
	case len(s.git.argv) == 0:
		fmt.Fprintf(stderr, "fetch-shim: %s: no git command after --\n", cmd)
		return ExitUsage
	case cmd == CmdBundle && (!validBranchRef(ref) || !IsObjectID(not)):
		fmt.Fprintf(stderr, "fetch-shim: bundle: want --ref refs/heads/NAME and --not COMMIT, not %q and %q\n", ref, not)
		return ExitUsage
	case cmd == CmdBundle:
		return writeBundle(ctx, s.git, dir, ref, not, stdout, stderr)
	case s.repo == "" || s.path == "" || s.exclude == "" || !validBranchRef("refs/heads/"+s.branch):
		fmt.Fprintf(stderr, "fetch-shim: worktree: --repo, --path, --branch and --exclude are needed\n")
		return ExitUsage
	}
	return makeWorktree(ctx, s, stdout, stderr)
}
