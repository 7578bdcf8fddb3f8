package review

import (
	"fmt"
	"strings"
)

// Default limits, when neither the configuration nor the workspace sets
// others.
const (
	DefaultMaxFiles = 20
	DefaultMaxLines = 400
)

// Limits are what a change may touch and still be merged without the
// owner.
type Limits struct {
	// MaxFiles and MaxLines bound the files changed and the lines added
	// plus removed; 0 lets nothing merge on its own.
	MaxFiles int `json:"max_files"`
	MaxLines int `json:"max_lines"`
	// Paths are the owner's patterns that always need the owner, beside
	// the built-in classes.
	Paths []Pattern `json:"paths,omitempty"`
}

// File is one file a change touches, with its line counts.
type File struct {
	Path    string
	Added   int
	Removed int
	Binary  bool
}

// maxNamed bounds the paths a reason names.
const maxNamed = 5

// Over returns why files are not within l, one reason per limit or class
// ("it changes 34 files; the limit is 20", ".github/workflows/ci.yml is a
// CI workflow"); none when they are within.
func (l Limits) Over(files []File) []string {
	var why []string
	if n := len(files); n > l.MaxFiles {
		why = append(why, fmt.Sprintf("it changes %s; the limit is %d", plural(n, "file"), l.MaxFiles))
	}
	lines := 0
	for _, f := range files {
		lines += f.Added + f.Removed
	}
	if lines > l.MaxLines {
		why = append(why, fmt.Sprintf("it changes %s; the limit is %d", plural(lines, "line"), l.MaxLines))
	}
	byClass := map[Class][]string{}
	var order []Class
	for _, f := range files {
		c, p := Classify(f.Path, l.Paths)
		if c == "" {
			continue
		}
		if _, ok := byClass[c]; !ok {
			order = append(order, c)
		}
		name := f.Path
		if c == Listed {
			name += " (" + string(p) + ")"
		}
		byClass[c] = append(byClass[c], name)
	}
	for _, c := range order {
		why = append(why, describeClass(c, byClass[c]))
	}
	return why
}

func describeClass(c Class, paths []string) string {
	named := paths
	more := ""
	if len(named) > maxNamed {
		more = fmt.Sprintf(" and %d more", len(named)-maxNamed)
		named = named[:maxNamed]
	}
	if len(paths) == 1 {
		return fmt.Sprintf("%s is %s", paths[0], c)
	}
	return fmt.Sprintf("%s%s are each %s", strings.Join(named, ", "), more, c)
}

// String describes l for the owner.
func (l Limits) String() string {
	s := fmt.Sprintf("at most %d files and %d lines changed", l.MaxFiles, l.MaxLines)
	if len(l.Paths) > 0 {
		ps := make([]string, len(l.Paths))
		for i, p := range l.Paths {
			ps[i] = string(p)
		}
		s += "; your paths that always need you: " + strings.Join(ps, ", ")
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
