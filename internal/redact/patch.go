package redact

import (
	"fmt"
	"strconv"
	"strings"
)

// Place is where in a commit a finding is.
type Place string

// Places in a commit.
const (
	// InFile: a line the commit (or patch) adds to the file Path; Line is
	// its line in the new file.
	InFile Place = ""
	// InMessage: the commit message; Line is the message's line.
	InMessage Place = "commit message"
	// InAuthor, InCommitter: the name or email of the commit's author or
	// committer; no Line.
	InAuthor    Place = "author"
	InCommitter Place = "committer"
	// InHeader: another header of the commit object (encoding, gpgsig,
	// mergetag, or one git does not know); Line is the object's line.
	InHeader Place = "commit header"
)

// PatchFinding is a secret in the lines a patch adds, or in a commit: the
// commit (its short hash, when there is one), the place in it, the file
// and its line in the new file (for InFile), and the rule that matched. It
// never holds the secret.
type PatchFinding struct {
	Commit string `json:"commit,omitempty"`
	In     Place  `json:"in,omitempty"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Rule   string `json:"rule"`
}

// String names f as "commit C: PLACE (RULE)", PLACE being "path:line",
// "commit message, line N", "author", "committer" or "commit header, line
// N" ("commit C: " left out when there is no commit): never the secret.
func (f PatchFinding) String() string {
	var b strings.Builder
	if f.Commit != "" {
		fmt.Fprintf(&b, "commit %s: ", f.Commit)
	}
	switch f.In {
	case InFile:
		fmt.Fprintf(&b, "%s:%d", f.Path, f.Line)
	case InMessage, InHeader:
		fmt.Fprintf(&b, "%s, line %d", f.In, f.Line)
	case InAuthor, InCommitter:
		b.WriteString(string(f.In))
	default:
		fmt.Fprintf(&b, "%q", f.In)
	}
	fmt.Fprintf(&b, " (%s)", f.Rule)
	return b.String()
}

// FindInPatch runs find (a Redactor's Find, or a fake) over the lines a
// unified patch adds (git diff, with or without context lines, with a/ and
// b/ prefixes), file by file, and maps each finding to its file and line in
// the new file.
// Removed and context lines are not looked at: a patch that deletes a
// secret does not add one.
func FindInPatch(find func(string) []Finding, patch string) []PatchFinding {
	var out []PatchFinding
	for _, f := range addedLines(patch) {
		for _, s := range find(strings.Join(f.lines, "\n")) {
			if s.Line < 1 || s.Line > len(f.numbers) {
				continue
			}
			out = append(out, PatchFinding{Path: f.path, Line: f.numbers[s.Line-1], Rule: s.Rule})
		}
	}
	return out
}

// addedFile is the lines a patch adds to one file, with their numbers in
// the new file.
type addedFile struct {
	path    string
	lines   []string
	numbers []int
}

// addedLines reads a unified patch and returns the added lines per file.
func addedLines(patch string) []addedFile {
	var files []addedFile
	var cur *addedFile
	next := 0
	inHunk := false
	for _, line := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files = append(files, addedFile{})
			cur, inHunk = &files[len(files)-1], false
		case cur == nil:
		case !inHunk && strings.HasPrefix(line, "+++ "):
			cur.path = strings.TrimPrefix(strings.TrimPrefix(line, "+++ "), "b/")
		case strings.HasPrefix(line, "@@ "):
			// @@ -a[,b] +c[,d] @@
			fields := strings.Fields(line)
			if len(fields) >= 3 {
				start, _, _ := strings.Cut(strings.TrimPrefix(fields[2], "+"), ",")
				next, _ = strconv.Atoi(start)
			}
			inHunk = true
		case !inHunk:
		case strings.HasPrefix(line, "+"):
			cur.lines = append(cur.lines, line[1:])
			cur.numbers = append(cur.numbers, next)
			next++
		case strings.HasPrefix(line, " "):
			next++ // a context line (patches with context)
		}
	}
	out := files[:0]
	for _, f := range files {
		if len(f.lines) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// DescribeFindings names findings as PatchFinding.String does, separated
// by "; ", at most max of them and then how many more: never the secrets.
func DescribeFindings(fs []PatchFinding, max int) string {
	var b strings.Builder
	for i, f := range fs {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(fs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
	}
	return b.String()
}
