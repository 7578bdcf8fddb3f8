package mirror

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxBundleHeader bounds a bundle's header (its signature, capabilities,
// prerequisites and refs).
const maxBundleHeader = 64 << 10

// bundleHeader is what a git bundle says before its pack.
type bundleHeader struct {
	refs    []bundleRef
	prereqs []string // the commits the pack's objects may name without holding them
	// size is the header's length in bytes: the pack starts there.
	size int64
}

// bundleRef is a "<object id> <ref>" line of a bundle's header.
type bundleRef struct {
	id, name string
}

// tip returns the object ref points at, when the bundle holds ref alone.
func (h bundleHeader) tip(ref string) (string, error) {
	if len(h.refs) != 1 || h.refs[0].name != ref {
		names := make([]string, len(h.refs))
		for i, r := range h.refs {
			names[i] = r.name
		}
		return "", fmt.Errorf("bundle holds %q, want %s alone", names, ref)
	}
	return h.refs[0].id, nil
}

// readBundleHeader reads the header of a v2 or v3 git bundle from r,
// which is left at the first byte of the pack. A v3 bundle may only state
// that its objects are named by SHA-1 (as the mirror's are): a filter
// (objects left out) or another object format is refused.
func readBundleHeader(r *bufio.Reader) (bundleHeader, error) {
	var h bundleHeader
	sig, err := h.line(r)
	if err != nil {
		return h, err
	}
	if sig != "# v2 git bundle" && sig != "# v3 git bundle" {
		return h, fmt.Errorf("not a git bundle (%.40q)", sig)
	}
	for {
		line, err := h.line(r)
		if err != nil {
			return h, err
		}
		switch {
		case line == "":
			return h, nil
		case strings.HasPrefix(line, "@"):
			if sig != "# v3 git bundle" || line != "@object-format=sha1" {
				return h, fmt.Errorf("bundle capability %.80q: not supported", line)
			}
		case strings.HasPrefix(line, "-"):
			// "-<object id> <subject>": the subject is only a comment.
			id, _, _ := strings.Cut(line[1:], " ")
			if err := checkSHA(id); err != nil {
				return h, fmt.Errorf("bundle prerequisite: %w", err)
			}
			h.prereqs = append(h.prereqs, id)
		default:
			id, name, ok := strings.Cut(line, " ")
			if !ok || checkSHA(id) != nil || checkRef(name) != nil {
				return h, fmt.Errorf("bundle ref line %.120q", line)
			}
			h.refs = append(h.refs, bundleRef{id: id, name: name})
		}
	}
}

// line reads one line of the header, without its newline.
func (h *bundleHeader) line(r *bufio.Reader) (string, error) {
	b, err := r.ReadSlice('\n')
	h.size += int64(len(b))
	switch {
	case h.size > maxBundleHeader || errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("bundle header over %d bytes", maxBundleHeader)
	case errors.Is(err, io.EOF):
		return "", fmt.Errorf("bundle header: %w", io.ErrUnexpectedEOF)
	case err != nil:
		return "", fmt.Errorf("bundle header: %w", err)
	}
	return string(b[:len(b)-1]), nil
}

// boundedReader passes at most max bytes of r; a read beyond that fails
// with ErrTooLarge (which, as a command's stdin, ends the command's
// input). Err tells, from any goroutine, how reading failed.
type boundedReader struct {
	r   io.Reader
	max int64
	n   int64
	mu  sync.Mutex
	err error // the first error but io.EOF
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if err := b.Err(); err != nil {
		return 0, err
	}
	// One byte past the bound tells a stream that ends right there from
	// one that goes on.
	if room := b.max - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		n, err = 0, fmt.Errorf("bundle over %d bytes: %w", b.max, ErrTooLarge)
	}
	if err != nil && err != io.EOF {
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
	}
	return n, err
}

// Err returns the error a read failed with (io.EOF is no failure).
func (b *boundedReader) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
