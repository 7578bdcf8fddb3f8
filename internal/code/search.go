package code

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Bounds of one search.
const (
	maxMatches      = 50
	maxSearchOutput = 12 << 10
	maxSearchFile   = 1 << 20
	maxSearchTotal  = 64 << 20
)

// Query is what Search looks for.
type Query struct {
	// Pattern is a Go (RE2) regular expression, or a literal string.
	Pattern string
	Literal bool
	// IgnoreCase matches without regard to case.
	IgnoreCase bool
	// Globs limit the files searched ("*.go", "internal/**/*.ts"); a glob
	// without a slash matches the file name at any depth.
	Globs []string
}

// Search finds the lines matching q in the files of the tree, each with a
// line of context before and after. RE2 runs in linear time, so a hostile
// pattern or file cannot make it hang.
func (t *Tree) Search(ctx context.Context, q Query) (string, error) {
	pat := q.Pattern
	if q.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	if q.IgnoreCase {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return "", fmt.Errorf("the pattern is not a valid RE2 regular expression (%s); set literal to search for the text as it is", shortErr(err))
	}
	var globs []*regexp.Regexp
	for _, g := range q.Globs {
		g = strings.TrimPrefix(strings.TrimSpace(g), "./")
		if g == "" {
			continue
		}
		r, err := regexp.Compile(globRegexp(strings.TrimPrefix(g, "/"), strings.Contains(g, "/")))
		if err != nil {
			return "", fmt.Errorf("the glob %q is not valid", sanitizeName(g))
		}
		globs = append(globs, r)
	}
	files, cut, err := t.walk(ctx)
	if err != nil {
		return "", fmt.Errorf("walk: %w", err)
	}
	var b strings.Builder
	matches, read, searched := 0, int64(0), 0
	full := false
	for _, f := range files {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if len(globs) > 0 && !anyMatch(globs, f.path) {
			continue
		}
		if f.size > maxSearchFile || read+f.size > maxSearchTotal {
			continue
		}
		data, _, _, err := t.readFile(f.path, maxSearchFile)
		if err != nil || isBinary(data) {
			continue
		}
		read += int64(len(data))
		searched++
		lines := splitLines(data)
		shown := -1 // last line index written for this file
		for i, l := range lines {
			if !re.Match(l) {
				continue
			}
			if matches >= maxMatches || b.Len() > maxSearchOutput {
				full = true
				break
			}
			if shown < 0 {
				fmt.Fprintf(&b, "%s\n", sanitizeName(f.path))
			} else if i-1 > shown+1 {
				b.WriteString("--\n")
			}
			for j := max(i-1, shown+1); j <= min(i+1, len(lines)-1); j++ {
				sep := "-"
				if re.Match(lines[j]) {
					sep = ":"
				}
				if j > i && sep == ":" {
					break // the next match writes it
				}
				fmt.Fprintf(&b, "%d%s\t%s\n", j+1, sep, sanitizeLine(string(lines[j])))
				shown = j
			}
			matches++
		}
		if full {
			break
		}
	}
	switch {
	case matches == 0:
		return fmt.Sprintf("No matches in %d files.", searched), nil
	case full:
		b.WriteString(fmt.Sprintf("…stopped at %d matches; narrow the pattern or the globs.", matches))
	default:
		b.WriteString(fmt.Sprintf("%d matches in %d files searched.", matches, searched))
	}
	if cut {
		b.WriteString(fmt.Sprintf(" (only the first %d files of the workspace were searched.)", maxWalk))
	}
	return b.String(), nil
}

func anyMatch(res []*regexp.Regexp, p string) bool {
	for _, r := range res {
		if r.MatchString(p) {
			return true
		}
	}
	return false
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
