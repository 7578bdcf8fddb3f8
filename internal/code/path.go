package code

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// skipped are directories never read: git's own data and Fetch's.
var skipped = map[string]bool{".git": true, ".fetch": true}

// Tree is one workspace directory opened for reading. Close releases it.
type Tree struct {
	root *os.Root
}

// Open opens the directory dir for reading.
func Open(dir string) (*Tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("code: open %s: %w", dir, err)
	}
	return &Tree{root: r}, nil
}

// Close releases the tree.
func (t *Tree) Close() error { return t.root.Close() }

// clean turns a path the model gave into a slash path relative to the
// workspace, or refuses it.
func clean(p string) (string, error) {
	p = strings.TrimSpace(p)
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return "", fmt.Errorf("%w: the path has control characters or invalid UTF-8", ErrRefused)
		}
	}
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') {
		return "", fmt.Errorf("%w: %q is absolute; give a path relative to the workspace", ErrRefused, sanitizeName(p))
	}
	c := path.Clean(strings.TrimPrefix(p, "./"))
	if c == ".." || strings.HasPrefix(c, "../") || strings.Contains(p, `\`) {
		return "", fmt.Errorf("%w: %q leads outside the workspace", ErrRefused, sanitizeName(p))
	}
	for _, part := range strings.Split(c, "/") {
		if skipped[part] {
			return "", fmt.Errorf("%w: %q is in %s, which the code tools do not read", ErrRefused, sanitizeName(p), part)
		}
	}
	return c, nil
}

// checkLinks refuses a path with a symbolic link in it, naming the link's
// target when it stays inside the workspace. os.Root guards the open
// itself; this makes the refusal clear and keeps links to .git out.
func (t *Tree) checkLinks(rel string) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := t.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist; code_map or code_search shows the files", sanitizeName(rel))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sanitizeName(rel), err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := t.root.Readlink(p)
		if err != nil {
			return fmt.Errorf("%w: %s is a symbolic link", ErrRefused, sanitizeName(p))
		}
		inside := target
		if !path.IsAbs(target) {
			inside = path.Clean(path.Join(path.Dir(p), target))
		}
		if path.IsAbs(inside) || inside == ".." || strings.HasPrefix(inside, "../") {
			return fmt.Errorf("%w: %s is a symbolic link that leads outside the workspace", ErrRefused, sanitizeName(p))
		}
		if _, err := clean(inside); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s is a symbolic link to %s; read that path instead", ErrRefused, sanitizeName(p), sanitizeName(inside))
	}
	return nil
}

// openFile opens a regular file of the tree for reading: non-blocking, so
// that a FIFO cannot hang us, and checked to be a regular file after the
// open.
func (t *Tree) openFile(rel string) (*os.File, fs.FileInfo, error) {
	if err := t.checkLinks(rel); err != nil {
		return nil, nil, err
	}
	f, err := t.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist", sanitizeName(rel))
		}
		// os.Root refuses a link that escapes, also one planted after
		// checkLinks looked.
		return nil, nil, fmt.Errorf("%w: %s cannot be opened inside the workspace", ErrRefused, sanitizeName(rel))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", sanitizeName(rel), err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory; code_map lists files", sanitizeName(rel))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrRefused, sanitizeName(rel))
	}
	return f, fi, nil
}

// readFile reads at most limit bytes of a regular file; truncated tells
// that there was more.
func (t *Tree) readFile(rel string, limit int64) (data []byte, fi fs.FileInfo, truncated bool, err error) {
	f, fi, err := t.openFile(rel)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", sanitizeName(rel), err)
	}
	if int64(len(data)) > limit {
		return data[:limit], fi, true, nil
	}
	return data, fi, false, nil
}

// isBinary tells a file the model should not see as text: a NUL byte in
// its head, or mostly invalid UTF-8.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8000)]
	if len(head) == 0 {
		return false
	}
	bad := 0
	for i := 0; i < len(head); {
		if head[i] == 0 {
			return true
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax {
			bad++
		}
		i += n
	}
	return bad*10 > len(head)
}

// maxLine bounds one line sent to the model.
const maxLine = 400

// sanitizeLine makes a line of a hostile file safe to show: valid UTF-8,
// no control characters but tabs, at most maxLine bytes.
func sanitizeLine(s string) string {
	cut := 0
	if len(s) > maxLine {
		cut = len(s) - maxLine
		s = s[:maxLine]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if cut > 0 {
		s = strings.TrimRight(s, "\uFFFD") + fmt.Sprintf("…(+%d bytes)", cut)
	}
	return s
}

// sanitizeName makes a file name safe to show: hostile names may carry
// control characters or newlines that would forge lines of a result.
func sanitizeName(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(sanitizeLine(s), "\t", "\uFFFD")
}
