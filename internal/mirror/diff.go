package mirror

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FileStat is one file a range changes, with its line counts (0 and 0
// for a binary file).
type FileStat struct {
	Path    string
	Added   int
	Removed int
	Binary  bool
}

// Diff is what a range of the mirror changes: its files and its patch,
// text only (a binary file is named in the patch, not included).
type Diff struct {
	Files []FileStat
	Patch string
	// Truncated: the patch was over the bound asked and is cut.
	Truncated bool
}

// What Diff runs, before FROM TO --.
var (
	diffNumstat = []string{"diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"}
	diffPatch   = []string{"diff", "--patch", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color"}
)

// Diff reads what to (a full ref or commit of the workspace's mirror)
// changes over from: the files with their line counts, and the patch cut
// at maxPatch bytes (Truncated).
func (m *Mirror) Diff(ctx context.Context, ws, from, to string, maxPatch int) (Diff, error) {
	op := "mirror: diff"
	if err := errors.Join(checkName(ws), checkRev(from), checkRev(to)); err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.existing(ws)
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	fromSHA, err := m.resolve(ctx, dir, from)
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	toSHA, err := m.resolve(ctx, dir, to)
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	num, err := m.hostGit(ctx, hostCmd{gitDir: dir, args: append(append([]string{}, diffNumstat...), fromSHA, toSHA, "--")})
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	var d Diff
	if d.Files, err = parseNumstat(num); err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	d.Patch, err = m.hostGit(ctx, hostCmd{gitDir: dir, max: maxPatch, args: append(append([]string{}, diffPatch...), fromSHA, toSHA, "--")})
	if errors.Is(err, ErrTooLarge) {
		d.Truncated, err = true, nil
	}
	if err != nil {
		return Diff{}, fmt.Errorf("%s: %w", op, err)
	}
	return d, nil
}

// parseNumstat reads `git diff --numstat -z --no-renames`: one
// "ADDED\tREMOVED\tPATH\0" record per file, "-" for a binary file's
// counts.
func parseNumstat(s string) ([]FileStat, error) {
	var out []FileStat
	for rec := range strings.SplitSeq(s, "\x00") {
		if rec == "" {
			continue
		}
		a, rest, ok1 := strings.Cut(rec, "\t")
		r, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || path == "" {
			return nil, fmt.Errorf("numstat record %q: %w", rec, ErrInvalid)
		}
		f := FileStat{Path: path}
		if a == "-" && r == "-" {
			f.Binary = true
		} else {
			var err1, err2 error
			f.Added, err1 = strconv.Atoi(a)
			f.Removed, err2 = strconv.Atoi(r)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("numstat record %q: %w", rec, ErrInvalid)
			}
		}
		out = append(out, f)
	}
	return out, nil
}
