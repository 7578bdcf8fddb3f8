package taskpage

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// Bounds of the diff shown.
const (
	// maxPatch is the most of a patch the page shows, in bytes.
	maxPatch = 2 << 20
	// maxHighlight is the longest line whose code is highlighted; longer
	// ones are shown plain.
	maxHighlight = 1000
)

// diffStyle is chroma's style the page's code colours come from.
const diffStyle = "github"

// diffFile is one file of a patch, ready to show: its name, an anchor
// for the file list, what git says of it beyond its lines (new, deleted,
// renamed, binary), its line counts and lines.
type diffFile struct {
	Name    string
	Anchor  string
	Notes   []string
	Added   int
	Removed int
	// Wide: a line number has more than four digits.
	Wide  bool
	Lines []diffLine
}

// diffLine is one line: Class is add, del, hunk, meta or ctx; N its line
// number (in the new file; in the old one for a deleted line), "" for a
// hunk header or note.
type diffLine struct {
	Class  string
	N      string
	Prefix string
	Tokens []token
}

// token is a run of code with chroma's CSS class for its kind.
type token struct {
	Class string
	Text  string
}

// hunkHeader reads "@@ -a,b +c,d @@": the first old and new line numbers.
var hunkHeader = regexp.MustCompile(`^@@+ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// highlight splits a (redacted) patch into files and lines, the code of
// each line coloured by the language its file's name suggests. git's
// header lines (diff --git, index, ---, +++, modes) are left out: the
// file's name and notes say what they say. Each line is tokenised on its
// own: a construct that spans lines (a block comment) is coloured line by
// line.
func highlight(patch string) []diffFile {
	if strings.TrimSpace(patch) == "" {
		return nil
	}
	var files []diffFile
	var cur *diffFile
	var lexer chroma.Lexer
	inHunk, binary := false, false
	oldN, newN := 0, 0
	for line := range strings.SplitSeq(strings.TrimSuffix(patch, "\n"), "\n") {
		if strings.HasPrefix(line, "diff --git ") || cur == nil {
			files = append(files, diffFile{Name: fileName(line), Anchor: fmt.Sprintf("file-%d", len(files)+1)})
			cur = &files[len(files)-1]
			lexer = lexerFor(cur.Name)
			inHunk, binary = false, false
			if strings.HasPrefix(line, "diff --git ") {
				continue
			}
		}
		if binary {
			continue // base85 of a binary file's contents
		}
		if !inHunk {
			if note, ok := headerNote(line); ok {
				if note != "" && !slices.Contains(cur.Notes, note) {
					cur.Notes = append(cur.Notes, note)
				}
				binary = strings.HasPrefix(line, "GIT binary patch")
				continue
			}
		}
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunk = true
			if m := hunkHeader.FindStringSubmatch(line); m != nil {
				oldN, _ = strconv.Atoi(m[1])
				newN, _ = strconv.Atoi(m[2])
			}
			cur.Lines = append(cur.Lines, diffLine{Class: "hunk", Tokens: []token{{Text: line}}})
		case inHunk && strings.HasPrefix(line, "+"):
			cur.Lines = append(cur.Lines, diffLine{Class: "add", N: strconv.Itoa(newN), Prefix: "+", Tokens: code(lexer, line[1:])})
			cur.Added++
			newN++
		case inHunk && strings.HasPrefix(line, "-"):
			cur.Lines = append(cur.Lines, diffLine{Class: "del", N: strconv.Itoa(oldN), Prefix: "-", Tokens: code(lexer, line[1:])})
			cur.Removed++
			oldN++
		case inHunk && strings.HasPrefix(line, " "):
			cur.Lines = append(cur.Lines, diffLine{Class: "ctx", N: strconv.Itoa(newN), Prefix: " ", Tokens: code(lexer, line[1:])})
			oldN++
			newN++
		default:
			cur.Lines = append(cur.Lines, diffLine{Class: "meta", Tokens: []token{{Text: line}}})
		}
		cur.Wide = cur.Wide || newN > 9999 || oldN > 9999
	}
	return files
}

// headerNote reads one of git's header lines of a file: ok is false for
// a line that is not one; note is what the page says of it ("" for lines
// whose sense is the file's name).
func headerNote(line string) (note string, ok bool) {
	for _, h := range []struct{ prefix, note string }{
		{"index ", ""}, {"--- ", ""}, {"+++ ", ""},
		{"new file mode", "new file"}, {"deleted file mode", "deleted"},
		{"old mode ", ""}, {"new mode ", "mode "}, {"similarity index ", ""},
		{"dissimilarity index ", ""}, {"rename from ", "renamed from "}, {"rename to ", ""},
		{"copy from ", "copied from "}, {"copy to ", ""},
		{"Binary files ", "binary file"}, {"GIT binary patch", "binary file"},
	} {
		rest, found := strings.CutPrefix(line, h.prefix)
		if !found {
			continue
		}
		switch h.note {
		case "renamed from ", "copied from ", "mode ":
			return h.note + rest, true
		}
		return h.note, true
	}
	return "", false
}

// fileName is the b/ side of a "diff --git a/x b/x" line.
func fileName(line string) string {
	rest, ok := strings.CutPrefix(line, "diff --git ")
	if !ok {
		return ""
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// lexerFor is the lexer of a file's language by its name, nil when none
// is known.
func lexerFor(name string) chroma.Lexer {
	if name == "" {
		return nil
	}
	l := lexers.Match(path.Base(name))
	if l == nil {
		return nil
	}
	return chroma.Coalesce(l)
}

// code tokenises one line of code; without a lexer, or on a line too long
// to bother, it is one plain token.
func code(l chroma.Lexer, s string) []token {
	if l == nil || len(s) > maxHighlight || s == "" {
		return []token{{Text: s}}
	}
	it, err := l.Tokenise(nil, s)
	if err != nil {
		return []token{{Text: s}}
	}
	var out []token
	for t := it(); t != chroma.EOF; t = it() {
		text := strings.TrimSuffix(t.Value, "\n")
		if text == "" {
			continue
		}
		out = append(out, token{Class: tokenClass(t.Type), Text: text})
	}
	return out
}

// tokenClass is chroma's short CSS class of a token type ("k", "s2", …),
// walking up to its category when the type has none of its own.
func tokenClass(t chroma.TokenType) string {
	for ; t > 0; t = t.Parent() {
		if c, ok := chroma.StandardTypes[t]; ok && c != "" {
			return c
		}
		if t.Parent() == t {
			break
		}
	}
	return ""
}

// codeBackgrounds are the backgrounds code is shown on (page.css: the
// page, the soft grey, added, deleted and hunk lines): every colour of
// the code keeps a contrast of minContrast on each (WCAG AA).
var codeBackgrounds = []string{"#ffffff", "#f6f8fa", "#e6ffec", "#ffebe9", "#ddf4ff"}

const minContrast = 4.5

// cssColor finds a foreground colour declaration.
var cssColor = regexp.MustCompile(`(^|[^-])color: *#([0-9a-fA-F]{6})\b`)

// codeCSS is the stylesheet of the code colours, made once from chroma's
// style (scoped under .chroma): without its backgrounds (the page's
// lines have their own), every colour darkened where it needs to be to
// keep minContrast on the page's backgrounds.
func codeCSS() ([]byte, error) {
	var b bytes.Buffer
	f := chromahtml.New(chromahtml.WithClasses(true))
	if err := f.WriteCSS(&b, styles.Get(diffStyle)); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for line := range strings.SplitSeq(b.String(), "\n") {
		if strings.Contains(line, "background-color") {
			if strings.HasPrefix(line, "/* PreWrapper */") || strings.HasPrefix(line, "/* Background */") {
				line = regexp.MustCompile(`background-color: *#[0-9a-fA-F]+;? *`).ReplaceAllString(line, "")
			}
			// A token with a background of its own keeps its colours.
			out.WriteString(line + "\n")
			continue
		}
		if strings.HasPrefix(line, "/* TextWhitespace */") {
			out.WriteString(line + "\n")
			continue
		}
		line = cssColor.ReplaceAllStringFunc(line, func(m string) string {
			sub := cssColor.FindStringSubmatch(m)
			return sub[1] + "color: " + readable(sub[2])
		})
		out.WriteString(line + "\n")
	}
	return out.Bytes(), nil
}

// readable is the colour hex (rrggbb), darkened step by step until it
// keeps minContrast on every code background, as #rrggbb.
func readable(hex string) string {
	r, g, bl := parseHex(hex)
	for range 100 {
		ok := true
		for _, bg := range codeBackgrounds {
			br, bgg, bb := parseHex(strings.TrimPrefix(bg, "#"))
			if contrast(r, g, bl, br, bgg, bb) < minContrast {
				ok = false
				break
			}
		}
		if ok {
			break
		}
		r, g, bl = r*0.95, g*0.95, bl*0.95
	}
	return fmt.Sprintf("#%02x%02x%02x", int(r+0.5), int(g+0.5), int(bl+0.5))
}

func parseHex(hex string) (r, g, b float64) {
	v, _ := strconv.ParseUint(hex, 16, 32)
	return float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff)
}

// contrast is WCAG's contrast ratio of two sRGB colours (0–255).
func contrast(r1, g1, b1, r2, g2, b2 float64) float64 {
	l1, l2 := luminance(r1, g1, b1), luminance(r2, g2, b2)
	if l1 < l2 {
		l1, l2 = l2, l1
	}
	return (l1 + 0.05) / (l2 + 0.05)
}

func luminance(r, g, b float64) float64 {
	lin := func(c float64) float64 {
		c /= 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}
