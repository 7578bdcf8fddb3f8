package shim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The shim reads a repository's layout and refs itself where that spares
// a git process (every process start counts in a task's time, and on some
// engines a git start costs tens of milliseconds). It reads only the plain
// layout git has written for years: a .git directory or gitdir file, a
// commondir file, loose refs and packed-refs. Anything else (a reftable,
// a symbolic branch, per-worktree configuration) is errUnusualRepo, and
// the command asks git instead.

// errUnusualRepo: the repository's layout is not one the shim reads
// itself; git is asked instead.
var errUnusualRepo = errors.New("a repository layout the shim does not read itself")

// errNoRef: the ref does not exist (neither loose nor packed).
var errNoRef = errors.New("no such ref")

// gitDirs are a work tree's repository directories: its own (where HEAD
// and the index are) and the common one (objects, refs, config).
type gitDirs struct {
	git, common string
}

// maxGitFile bounds the small files read here (HEAD, a ref, gitdir);
// packed-refs is read line by line.
const maxGitFile = 4 << 10

// findGitDirs finds the repository of the work tree at dir: dir/.git, a
// directory or a "gitdir: PATH" file (a linked worktree, a submodule).
func findGitDirs(dir string) (gitDirs, error) {
	dot := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return gitDirs{}, fmt.Errorf("%w: %w", errUnusualRepo, err)
	}
	var d gitDirs
	switch {
	case fi.IsDir():
		d.git = dot
	case fi.Mode().IsRegular():
		b, err := readSmall(dot)
		if err != nil {
			return gitDirs{}, err
		}
		p, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
		if !ok || p == "" {
			return gitDirs{}, fmt.Errorf("%w: %s is not a gitdir file", errUnusualRepo, dot)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		d.git = p
	default:
		return gitDirs{}, fmt.Errorf("%w: %s is neither a directory nor a file", errUnusualRepo, dot)
	}
	d.common = d.git
	if b, err := readSmall(filepath.Join(d.git, "commondir")); err == nil {
		p := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.git, p)
		}
		d.common = filepath.Clean(p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return gitDirs{}, err
	}
	// A reftable (git 2.45 and later) keeps refs where this reader does
	// not look.
	if _, err := os.Lstat(filepath.Join(d.common, "reftable")); err == nil {
		return gitDirs{}, fmt.Errorf("%w: refs in a reftable", errUnusualRepo)
	}
	return d, nil
}

// head reads HEAD: the commit it names and its full name ("refs/heads/X",
// or "HEAD" when detached), as `git rev-parse HEAD --symbolic-full-name
// HEAD` prints them. An unborn branch is errNoRef.
func (d gitDirs) head() (id, name string, err error) {
	b, err := readSmall(filepath.Join(d.git, "HEAD"))
	if err != nil {
		return "", "", err
	}
	line := strings.TrimRight(string(b), "\r\n")
	if ref, ok := strings.CutPrefix(line, "ref: "); ok {
		if !strings.HasPrefix(ref, "refs/heads/") {
			return "", "", fmt.Errorf("%w: HEAD is %q", errUnusualRepo, ref)
		}
		id, err := d.resolve(ref)
		return id, ref, err
	}
	if !IsObjectID(line) {
		return "", "", fmt.Errorf("%w: HEAD is %.80q", errUnusualRepo, line)
	}
	return line, "HEAD", nil
}

// resolve reads a branch ref (refs/heads/...): its loose file, or its
// line in packed-refs.
func (d gitDirs) resolve(ref string) (string, error) {
	if !validBranchRef(ref) {
		return "", fmt.Errorf("%w: ref %q", errUnusualRepo, ref)
	}
	b, err := readSmall(filepath.Join(d.common, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		id := strings.TrimRight(string(b), "\r\n")
		if !IsObjectID(id) {
			return "", fmt.Errorf("%w: %s holds %.80q", errUnusualRepo, ref, id)
		}
		return id, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errIsDir):
		return d.packed(ref)
	default:
		return "", err
	}
}

// packed finds ref in packed-refs.
func (d gitDirs) packed(ref string) (string, error) {
	f, err := os.Open(filepath.Join(d.common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", ref, errNoRef)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", errUnusualRepo, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		id, name, ok := bytes.Cut(line, []byte(" "))
		if ok && string(name) == ref {
			if !IsObjectID(string(id)) {
				return "", fmt.Errorf("%w: packed-refs holds %.80q for %s", errUnusualRepo, id, ref)
			}
			return string(id), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%w: packed-refs: %w", errUnusualRepo, err)
	}
	return "", fmt.Errorf("%s: %w", ref, errNoRef)
}

// errIsDir: a path read as a file is a directory (refs/heads/a when
// refs/heads/a/b exists).
var errIsDir = errors.New("is a directory")

// readSmall reads a small regular file (at most maxGitFile bytes); a
// symbolic link is followed, as git follows it.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", path, errIsDir)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxGitFile {
		return nil, fmt.Errorf("%w: %s is not a small file", errUnusualRepo, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxGitFile {
		return nil, fmt.Errorf("%w: %s is not a small file", errUnusualRepo, path)
	}
	return b, nil
}

// validBranchRef reports whether ref is refs/heads/NAME with a name that
// is a plain relative path (no "..", no empty parts), so that it can be
// read as a file under the common directory.
func validBranchRef(ref string) bool {
	name, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || name == "" || strings.HasSuffix(name, ".lock") {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".") {
			return false
		}
	}
	return !strings.ContainsAny(name, "\\\x00 ~^:?*[")
}

// IsObjectID reports whether s is a full SHA-1 or SHA-256 object name.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
