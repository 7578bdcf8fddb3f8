package discord

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/chat"
)

// Discord's limits.
const (
	// MaxContent is the longest message content Discord accepts, in
	// characters.
	MaxContent = 2000
	// maxFiles is the most attachments one message may carry.
	maxFiles = 10
	// maxUpload is the most bytes of attachments one message may carry
	// (Discord's upload limit without a boost).
	maxUpload = 10 << 20
	// maxButtons is the most buttons one message may carry (5 rows of 5).
	maxButtons = 25
	// maxLabel is the longest button label.
	maxLabel = 80
)

// Thresholds for sending text as a file instead of messages.
const (
	// maxInlineDiff is the longest diff shown inline in a fenced block;
	// a longer one is attached as a .diff file.
	maxInlineDiff = 1500
	// maxInlineParts is the most messages a reply is split into; a longer
	// reply is attached as a file with its beginning shown inline.
	maxInlineParts = 4
)

// fence is the Markdown code fence Discord renders.
const fence = "```"

// part is one Discord message of a reply.
type part struct {
	content string
	files   []chat.File
	buttons []chat.Action
}

// render turns a reply into the messages that carry it: long diffs and
// very long text become attachments, the rest is split at MaxContent on
// line boundaries with code fences balanced in every part; files go with
// the last part (several parts when there are more than ten) and so do
// the buttons.
func render(r chat.Reply) []part {
	text, files := extractDiffs(r.Text)
	files = append(files, r.Files...)
	chunks := Split(text, MaxContent)
	if len(chunks) > maxInlineParts {
		head := Split(text, MaxContent-200)[0]
		lines := strings.Count(text, "\n") + 1
		name := uniqueName(files, "reply.txt")
		files = append([]chat.File{{Name: name, Data: []byte(text)}}, files...)
		chunks = []string{fmt.Sprintf("%s\n… the whole reply (%d lines) is attached as %s.", head, lines, name)}
	}
	var parts []part
	for _, c := range chunks {
		if strings.TrimSpace(c) != "" {
			parts = append(parts, part{content: c})
		}
	}
	if len(parts) == 0 && (len(files) > 0 || len(r.Actions) > 0) {
		parts = append(parts, part{})
	}
	for len(files) > 0 {
		n := uploadCount(files)
		last := &parts[len(parts)-1]
		if len(last.files) > 0 {
			parts = append(parts, part{})
			last = &parts[len(parts)-1]
		}
		last.files, files = files[:n], files[n:]
	}
	if len(r.Actions) > 0 {
		last := &parts[len(parts)-1]
		last.buttons = r.Actions[:min(len(r.Actions), maxButtons)]
		if last.content == "" {
			last.content = "Choose:"
		}
	}
	return parts
}

// uploadCount is how many of files, from the first, one message carries:
// at most maxFiles and maxUpload bytes, and at least one (a file over the
// limit goes alone, for Discord to refuse).
func uploadCount(files []chat.File) int {
	n, size := 0, 0
	for n < len(files) && n < maxFiles {
		size += len(files[n].Data)
		if n > 0 && size > maxUpload {
			break
		}
		n++
	}
	return n
}

// Split cuts text into parts of at most max characters, at line
// boundaries where it can (a line longer than a part is cut), so that
// code fences are balanced in every part: a part that ends inside a
// fenced block closes it, and the next part reopens it with the same
// language. max must leave room for a fence line and some text (≥ 64).
func Split(text string, max int) []string {
	text = strings.TrimRight(text, "\n")
	if utf8.RuneCountInString(text) <= max && balanced(text) {
		return []string{text}
	}
	var parts []string
	var cur strings.Builder
	curLen := 0
	open := "" // the opening fence line while inside a block
	closer := utf8.RuneCountInString("\n" + fence)
	flush := func() {
		s := strings.TrimRight(cur.String(), "\n")
		if open != "" {
			s += "\n" + fence
		}
		if strings.TrimSpace(s) != "" && s != open+"\n"+fence {
			parts = append(parts, s)
		}
		cur.Reset()
		curLen = 0
		if open != "" {
			cur.WriteString(open + "\n")
			curLen = utf8.RuneCountInString(open) + 1
		}
	}
	for _, line := range strings.Split(text, "\n") {
		for _, piece := range cutLine(line, max-closer-utf8.RuneCountInString(open)-2) {
			n := utf8.RuneCountInString(piece) + 1
			reserve := 0
			if open != "" || isFence(piece) {
				reserve = closer
			}
			if curLen+n+reserve > max && curLen > 0 {
				flush()
			}
			cur.WriteString(piece + "\n")
			curLen += n
			if isFence(piece) {
				if open == "" {
					open = strings.TrimSpace(piece)
				} else {
					open = ""
				}
			}
		}
	}
	flush()
	if len(parts) == 0 {
		return []string{""}
	}
	return parts
}

// cutLine cuts a line longer than n characters into pieces of n.
func cutLine(line string, n int) []string {
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(line) <= n {
		return []string{line}
	}
	var out []string
	r := []rune(line)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return append(out, string(r))
}

func isFence(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " "), fence)
}

// balanced tells whether text opens as many code fences as it closes.
func balanced(text string) bool {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if isFence(line) {
			n++
		}
	}
	return n%2 == 0
}

// extractDiffs moves long diffs out of text into .diff files: fenced
// ```diff / ```patch blocks, and a bare unified diff (from a "diff --git"
// line to the end). What stays is a line naming the file.
func extractDiffs(text string) (string, []chat.File) {
	var files []chat.File
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		lang := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fence)))
		switch {
		case isFence(line) && (lang == "diff" || lang == "patch"):
			end := i + 1
			for end < len(lines) && !isFence(lines[end]) {
				end++
			}
			body := strings.Join(lines[i+1:min(end, len(lines))], "\n")
			if utf8.RuneCountInString(body) <= maxInlineDiff {
				out = append(out, lines[i:min(end+1, len(lines))]...)
			} else {
				name := uniqueName(files, "changes.diff")
				files = append(files, chat.File{Name: name, Data: []byte(body + "\n")})
				out = append(out, diffNote(name, body))
			}
			i = end
		case strings.HasPrefix(line, "diff --git ") && utf8.RuneCountInString(strings.Join(lines[i:], "\n")) > maxInlineDiff:
			body := strings.Join(lines[i:], "\n")
			name := uniqueName(files, "changes.diff")
			files = append(files, chat.File{Name: name, Data: []byte(body + "\n")})
			out = append(out, diffNote(name, body))
			i = len(lines)
		default:
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), files
}

func diffNote(name, body string) string {
	var add, del int
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return fmt.Sprintf("📎 The diff is attached as %s (+%d −%d lines).", name, add, del)
}

// uniqueName returns name, or name with a number before its extension
// when files already has one of that name.
func uniqueName(files []chat.File, name string) string {
	taken := func(n string) bool {
		for _, f := range files {
			if f.Name == n {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	base, ext, _ := strings.Cut(name, ".")
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d.%s", base, i, ext)
		if !taken(n) {
			return n
		}
	}
}

// truncate shortens s to at most n characters, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
