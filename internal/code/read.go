package code

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Bounds of one read.
const (
	MaxReadLines = 400
	MaxReadBytes = 16 << 10
	// maxReadFile is the largest file read by line range; a bigger one is
	// described and left to Search.
	maxReadFile = 4 << 20
)

// Read returns the lines from..to (from 1, inclusive; to 0 means as many
// as the bounds allow) of the file at rel, each prefixed with its number.
// A binary or huge file is described, not shown.
func (t *Tree) Read(ctx context.Context, rel string, from, to int) (string, error) {
	rel, err := t.resolve(rel)
	if err != nil {
		return "", err
	}
	data, fi, truncated, err := t.readFile(rel, maxReadFile)
	if err != nil {
		return "", err
	}
	name := sanitizeName(rel)
	if truncated {
		return fmt.Sprintf("%s is %d bytes, too big to read by lines here; use code_search in it, or code_outline.", name, fi.Size()), nil
	}
	if isBinary(data) {
		return fmt.Sprintf("%s is a binary file of %d bytes; not shown.", name, fi.Size()), nil
	}
	lines := splitLines(data)
	total := len(lines)
	if total == 0 {
		return name + " is empty.", nil
	}
	if from < 1 {
		from = 1
	}
	if from > total {
		return fmt.Sprintf("%s has %d lines; line %d is past its end.", name, total, from), nil
	}
	if to < from || to > total {
		to = total
	}
	var b strings.Builder
	last := from - 1
	for i := from; i <= to; i++ {
		line := fmt.Sprintf("%d\t%s\n", i, sanitizeLine(string(lines[i-1])))
		if i-from >= MaxReadLines || b.Len()+len(line) > MaxReadBytes {
			break
		}
		b.WriteString(line)
		last = i
	}
	head := fmt.Sprintf("%s, lines %d-%d of %d:\n", name, from, last, total)
	if last < to {
		return head + b.String() + fmt.Sprintf("…cut at the read limit (%d lines, %d KiB); read on from line %d.", MaxReadLines, MaxReadBytes>>10, last+1), nil
	}
	return head + strings.TrimSuffix(b.String(), "\n"), nil
}

// resolve checks a path the model gave: inside the workspace, not in
// .git or .fetch, not ignored by git, not through a link.
func (t *Tree) resolve(p string) (string, error) {
	rel, err := clean(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("give a file path relative to the workspace; code_map lists the files")
	}
	if err := t.checkLinks(rel); err != nil {
		return "", err
	}
	if t.ignoredPath(rel) {
		return "", fmt.Errorf("%w: %s is ignored by .gitignore (it may hold secrets or build output)", ErrRefused, sanitizeName(rel))
	}
	return rel, nil
}

// splitLines splits text into lines without their line ends.
func splitLines(data []byte) [][]byte {
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// maxOutlineFile is the largest file outlined.
const maxOutlineFile = 1 << 20

// Outline lists the definitions of the file at rel with their lines.
func (t *Tree) Outline(ctx context.Context, rel string) (string, error) {
	rel, err := t.resolve(rel)
	if err != nil {
		return "", err
	}
	data, fi, truncated, err := t.readFile(rel, maxOutlineFile)
	if err != nil {
		return "", err
	}
	name := sanitizeName(rel)
	if truncated {
		return fmt.Sprintf("%s is %d bytes, too big to outline; use code_search in it.", name, fi.Size()), nil
	}
	if isBinary(data) {
		return fmt.Sprintf("%s is a binary file of %d bytes; no outline.", name, fi.Size()), nil
	}
	syms := outline(rel, data)
	lines := len(splitLines(data))
	if len(syms) == 0 {
		return fmt.Sprintf("%s (%d lines): no definitions found; read it with code_read.", name, lines), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d lines):\n", name, lines)
	for _, s := range syms {
		indent := ""
		if s.Member {
			indent = "  "
		}
		line := fmt.Sprintf("%s%d-%d\t%s\n", indent, s.Line, s.End, s.Sig)
		if b.Len()+len(line) > MaxReadBytes {
			b.WriteString("…more definitions cut.\n")
			break
		}
		b.WriteString(line)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
