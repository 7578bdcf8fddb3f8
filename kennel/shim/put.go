package shim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CmdPut writes its stdin to a file under a root directory, never outside
// it (the root is opened as an os.Root: a symlink the CLI planted on the
// way does not lead the write out), creating the directories between:
// how a file the owner gave a task reaches the kennel, as exec stdin
// (which works the same on a remote engine).
//
//	fetch-shim put ROOT REL < content
const CmdPut = "put"

// MaxPut bounds what put writes.
const MaxPut = 64 << 20

// PutArgv is the argv that writes stdin to ROOT/REL.
func PutArgv(root, rel string) []string { return []string{Path, CmdPut, root, rel} }

// errPutPath: the file is not a relative path inside its root.
var errPutPath = errors.New("the file must be a relative path inside the root")

// putCommand is the put command.
func putCommand(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "fetch-shim: put: want ROOT REL, got %q\n", args)
		return ExitUsage
	}
	if err := putFile(args[0], args[1], stdin); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: put: %v\n", err)
		return ExitShimFailed
	}
	return ExitOK
}

// putFile writes r to root/rel.
func putFile(root, rel string, r io.Reader) error {
	clean := filepath.Clean(rel)
	if !filepath.IsAbs(root) || filepath.IsAbs(rel) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s in %s: %w", rel, root, errPutPath)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer rt.Close()
	if dir := filepath.Dir(clean); dir != "." {
		if err := rt.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := rt.OpenFile(clean, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, MaxPut+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxPut {
		err = fmt.Errorf("%s: more than %d bytes", rel, MaxPut)
	}
	return err
}
