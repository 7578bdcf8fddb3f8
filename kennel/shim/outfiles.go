package shim

import (
	"archive/tar"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// CmdOutfiles takes the files a task's CLI left for the owner in a folder
// of its work tree (harness.OutDir) and writes them to stdout as a tar
// stream, then empties the folder:
//
//	fetch-shim outfiles --root DIR --dir REL --max-files N --max-bytes M --max-total T
//
// The folder is DIR/REL, reached one name at a time from DIR without
// following a symlink (REL is relative, without "." or ".."): everything
// under DIR but DIR itself is the CLI's, so a folder or file planted as a
// symlink to /etc or to another work tree is never read. Only the
// folder's regular files with one link are sent, opened without following
// symlinks and checked again once open; at most N of them (by name), each
// of at most M bytes, T bytes in all. Every other entry (a symlink, a
// folder, a device, a file past N, M or T) is a tar entry without data
// whose PAX record
// OutSkippedKey says why. Then every entry of the folder but folders is
// removed (a symlink itself, never what it names), so that the next run's
// result does not send them again. A missing folder is an empty stream.
const CmdOutfiles = "outfiles"

// OutSkippedKey is the PAX record of an outfiles entry that was not sent:
// why not.
const OutSkippedKey = "FETCH.skipped"

// OutLimits bound what outfiles sends.
type OutLimits struct {
	// Files is the most files sent; Bytes the largest file; Total all
	// files' bytes together, at most MaxOutTotal.
	Files        int
	Bytes, Total int64
}

// MaxOutTotal is the most bytes of files outfiles sends in one batch: what
// a batch's stdout holds (MaxBatchStdout) less room for the tar headers
// of maxOutEntries entries.
const MaxOutTotal = MaxBatchStdout - 256<<10

// OutfilesArgv is the argv of the outfiles command.
func OutfilesArgv(root, rel string, l OutLimits) []string {
	return []string{Path, CmdOutfiles, "--root", root, "--dir", rel, "--max-files", strconv.Itoa(l.Files),
		"--max-bytes", strconv.FormatInt(l.Bytes, 10), "--max-total", strconv.FormatInt(l.Total, 10)}
}

// maxOutEntries bounds the entries of the folder outfiles looks at.
const maxOutEntries = 100

// outfilesCommand parses the outfiles command's arguments and carries it
// out.
func outfilesCommand(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("fetch-shim "+CmdOutfiles, flag.ContinueOnError)
	flags.SetOutput(stderr)
	root := flags.String("root", "", "the absolute path the folder is under")
	rel := flags.String("dir", "", "the folder, relative to --root")
	var l OutLimits
	flags.IntVar(&l.Files, "max-files", 10, "the most files sent")
	flags.Int64Var(&l.Bytes, "max-bytes", 8<<20, "the largest file sent, in bytes")
	flags.Int64Var(&l.Total, "max-total", MaxOutTotal, "the most bytes of all files sent")
	if err := flags.Parse(args); err != nil {
		return ExitUsage
	}
	if flags.NArg() > 0 || !strings.HasPrefix(*root, "/") || l.Files < 0 || l.Bytes < 0 || l.Total < 0 || l.Total > MaxOutTotal {
		fmt.Fprintf(stderr, "fetch-shim: outfiles: want an absolute --root, a relative --dir, limits of 0 or more (a total up to %d), no arguments\n", MaxOutTotal)
		return ExitUsage
	}
	names, err := relNames(*rel)
	if err != nil {
		fmt.Fprintf(stderr, "fetch-shim: outfiles: %v\n", err)
		return ExitUsage
	}
	if err := writeOutfiles(*root, names, l, stdout); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: outfiles: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// relNames splits a relative path into its names.
func relNames(rel string) ([]string, error) {
	names := strings.Split(rel, "/")
	for _, n := range names {
		if n == "" || n == "." || n == ".." {
			return nil, fmt.Errorf("invalid folder %q", rel)
		}
	}
	return names, nil
}

// openNoFollow opens the folder root/names... one name at a time, never
// following a symlink.
func openNoFollow(root string, names []string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	for _, n := range names {
		next, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: n, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// writeOutfiles writes the folder's files as a tar stream to w and
// empties the folder.
func writeOutfiles(root string, names []string, l OutLimits, w io.Writer) error {
	tw := tar.NewWriter(w)
	fd, err := openNoFollow(root, names)
	if errors.Is(err, unix.ENOENT) {
		return tw.Close() // no folder: nothing to send
	}
	if err != nil {
		// ELOOP or ENOTDIR: a name on the way is a symlink or a file.
		return fmt.Errorf("the folder: %w", err)
	}
	dir := os.NewFile(uintptr(fd), strings.Join(names, "/"))
	defer dir.Close()
	entries, err := dir.ReadDir(maxOutEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the folder: %w", err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var took taken
	for _, e := range entries {
		name := e.Name()
		data, skip := readOutfile(fd, name, e.IsDir(), took, l)
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if skip != "" {
			hdr.Size, data = 0, nil
			hdr.PAXRecords = map[string]string{OutSkippedKey: skip}
		} else {
			took.add(data)
		}
		if !validOutName(name) {
			// The name does not fit a tar entry Fetch reads: what is
			// told is a quoted form.
			hdr.Name = strconv.QuoteToASCII(name)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !e.IsDir() {
			// A file that cannot be removed (the CLI took the folder's
			// write permission) stays, and goes again with the next
			// result: what was read is still sent.
			_ = unix.Unlinkat(fd, name, 0)
		}
	}
	return tw.Close()
}

// taken is what outfiles sent so far.
type taken struct {
	files int
	bytes int64
}

func (t *taken) add(data []byte) { t.files, t.bytes = t.files+1, t.bytes+int64(len(data)) }

// over says why a file of size bytes is not sent after t ("" when it is).
func (t taken) over(size int64, l OutLimits) string {
	switch {
	case size > l.Bytes:
		return fmt.Sprintf("over %d bytes", l.Bytes)
	case t.files >= l.Files:
		return fmt.Sprintf("over the %d files sent with a result", l.Files)
	case t.bytes+size > l.Total:
		return fmt.Sprintf("over the %d bytes sent with a result", l.Total)
	}
	return ""
}

// readOutfile reads the folder's entry name (dirfd is the folder) when it
// is to be sent after took, or says why not.
func readOutfile(dirfd int, name string, isDir bool, took taken, l OutLimits) ([]byte, string) {
	if isDir {
		return nil, "a folder (only files are sent)"
	}
	if !validOutName(name) {
		return nil, "a name Fetch does not send (hidden, not printable text, or over 255 bytes)"
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, "could not be read: " + err.Error()
	}
	if why := notSendable(st); why != "" {
		return nil, why
	}
	if why := took.over(st.Size, l); why != "" {
		return nil, why
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "could not be read: " + err.Error()
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var open unix.Stat_t
	if err := unix.Fstat(fd, &open); err != nil {
		return nil, "could not be read: " + err.Error()
	}
	if open.Dev != st.Dev || open.Ino != st.Ino {
		return nil, "changed while it was read"
	}
	if why := notSendable(open); why != "" {
		return nil, why
	}
	limit := min(l.Bytes, l.Total-took.bytes)
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "could not be read: " + err.Error()
	}
	if why := took.over(int64(len(data)), l); why != "" {
		return nil, why // it grew
	}
	return data, ""
}

// notSendable says why a file with st is not sent ("" when it is).
func notSendable(st unix.Stat_t) string {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return "a symlink (only files are sent, never what a link names)"
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "not a regular file"
	case st.Nlink != 1:
		return "a hard link (only files with one name are sent)"
	}
	return ""
}

// maxOutName bounds an out file's name, in bytes.
const maxOutName = 255

// validOutName reports whether name is one Fetch takes for an out file:
// a base name of printable UTF-8 (spaces allowed), not hidden.
func validOutName(name string) bool {
	if name == "" || len(name) > maxOutName || strings.HasPrefix(name, ".") || !utf8.ValidString(name) || strings.ContainsAny(name, "/\\") {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// OutFile is a file outfiles sent, or one it did not (Skipped says why).
type OutFile struct {
	Name    string
	Data    []byte
	Skipped string
}

// ReadOutfiles reads what outfiles printed: kennel output, held to the
// same limits again (names checked; at most maxOutEntries entries).
func ReadOutfiles(r io.Reader, l OutLimits) ([]OutFile, error) {
	tr := tar.NewReader(r)
	var out []OutFile
	var took taken
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("outfiles: %w", err)
		}
		if len(out) == maxOutEntries {
			return out, fmt.Errorf("outfiles: over %d entries", maxOutEntries)
		}
		f := OutFile{Name: hdr.Name, Skipped: hdr.PAXRecords[OutSkippedKey]}
		switch {
		case hdr.Typeflag != tar.TypeReg:
			return out, fmt.Errorf("outfiles: %q: not a file entry", hdr.Name)
		case !validOutName(f.Name):
			f.Name, f.Skipped = strconv.QuoteToASCII(f.Name), "a name Fetch does not send (hidden, not printable text, or over 255 bytes)"
		case f.Skipped != "":
		default:
			if f.Skipped = took.over(hdr.Size, l); f.Skipped != "" {
				break
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return out, fmt.Errorf("outfiles: %s: %w", f.Name, err)
			}
			f.Data = data
			took.add(data)
		}
		if f.Skipped != "" {
			f.Skipped = clipSkipped(f.Skipped)
		}
		out = append(out, f)
	}
}

// clipSkipped bounds a reason read from the kennel.
func clipSkipped(s string) string {
	const max = 200
	s = strings.ToValidUTF8(s, "?")
	if len(s) > max {
		s = s[:max]
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
}
