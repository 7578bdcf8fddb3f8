package redact

import "strings"

// FindInCommit runs find over a commit object as git stores it (what `git
// cat-file commit` prints) and names each finding by commit (a short
// hash) and place: the author or committer header (its name and email),
// another header (InHeader, by the object's line), or the message
// (InMessage, by its line). The tree and parent headers, object names, are
// left out: no secret is there, and a hash could only mislead a rule.
// The object is read as bytes, as git stores it: not re-encoded from its
// encoding header, and whole past a NUL (where git log would stop).
func FindInCommit(find func(string) []Finding, commit, object string) []PatchFinding {
	header, _, _ := strings.Cut(object, "\n\n")
	lines := strings.Split(header, "\n")
	places := make([]Place, len(lines))
	cur := InHeader
	for i, l := range lines {
		if strings.HasPrefix(l, " ") { // a continuation of the header before
			places[i] = cur
			continue
		}
		name, _, _ := strings.Cut(l, " ")
		switch name {
		case "tree", "parent":
			// Blanked, keeping the line count; a continuation of one
			// (which fsck refuses) is read as a header of its own.
			lines[i], places[i], cur = "", InHeader, InHeader
			continue
		case "author":
			cur = InAuthor
		case "committer":
			cur = InCommitter
		default:
			cur = InHeader
		}
		places[i] = cur
	}
	text := strings.Join(lines, "\n") + object[len(header):]
	var out []PatchFinding
	for _, s := range find(text) {
		f := PatchFinding{Commit: commit, Rule: s.Rule}
		switch {
		case s.Line < 1:
			continue
		case s.Line <= len(lines):
			f.In = places[s.Line-1]
			if f.In == InHeader {
				f.Line = s.Line
			}
		default: // the message starts after the header and an empty line
			f.In, f.Line = InMessage, max(s.Line-len(lines)-1, 1)
		}
		out = append(out, f)
	}
	return out
}
