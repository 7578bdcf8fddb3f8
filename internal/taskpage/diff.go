package taskpage

import (
	"bytes"
	"path"
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

// diffFile is one file of a patch, ready to show.
type diffFile struct {
	Name  string
	Lines []diffLine
}

// diffLine is one line: Class is add, del, hunk, meta or ctx.
type diffLine struct {
	Class  string
	Prefix string
	Tokens []token
}

// token is a run of code with chroma's CSS class for its kind.
type token struct {
	Class string
	Text  string
}

// highlight splits a (redacted) patch into files and lines, the code of
// each line coloured by the language its file's name suggests. Each line
// is tokenised on its own: a construct that spans lines (a block comment)
// is coloured line by line.
func highlight(patch string) []diffFile {
	if strings.TrimSpace(patch) == "" {
		return nil
	}
	var files []diffFile
	var cur *diffFile
	var lexer chroma.Lexer
	for line := range strings.SplitSeq(strings.TrimSuffix(patch, "\n"), "\n") {
		if strings.HasPrefix(line, "diff --git ") || cur == nil {
			files = append(files, diffFile{Name: fileName(line)})
			cur = &files[len(files)-1]
			lexer = lexerFor(cur.Name)
		}
		switch {
		case strings.HasPrefix(line, "diff --git "), strings.HasPrefix(line, "index "),
			strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "),
			strings.HasPrefix(line, "new file mode"), strings.HasPrefix(line, "deleted file mode"),
			strings.HasPrefix(line, "similarity index"), strings.HasPrefix(line, "rename "),
			strings.HasPrefix(line, "old mode"), strings.HasPrefix(line, "new mode"),
			strings.HasPrefix(line, "Binary files"), strings.HasPrefix(line, `\ No newline`):
			cur.Lines = append(cur.Lines, diffLine{Class: "meta", Tokens: []token{{Text: line}}})
		case strings.HasPrefix(line, "@@"):
			cur.Lines = append(cur.Lines, diffLine{Class: "hunk", Tokens: []token{{Text: line}}})
		case strings.HasPrefix(line, "+"):
			cur.Lines = append(cur.Lines, diffLine{Class: "add", Prefix: "+", Tokens: code(lexer, line[1:])})
		case strings.HasPrefix(line, "-"):
			cur.Lines = append(cur.Lines, diffLine{Class: "del", Prefix: "-", Tokens: code(lexer, line[1:])})
		case strings.HasPrefix(line, " "):
			cur.Lines = append(cur.Lines, diffLine{Class: "ctx", Prefix: " ", Tokens: code(lexer, line[1:])})
		default:
			cur.Lines = append(cur.Lines, diffLine{Class: "meta", Tokens: []token{{Text: line}}})
		}
	}
	return files
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

// codeCSS is the stylesheet of the code colours, made once from chroma's
// style (scoped under .chroma).
func codeCSS() ([]byte, error) {
	var b bytes.Buffer
	f := chromahtml.New(chromahtml.WithClasses(true))
	if err := f.WriteCSS(&b, styles.Get(diffStyle)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
