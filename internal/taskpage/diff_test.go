package taskpage

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/task"
)

// longLine is a JavaScript line of exactly longLineLen characters: on a
// phone it is far wider than the screen.
const longLineLen = 120

func longLine() string {
	s := `  const message = ["alpha", "beta"].join(" ") + "`
	return s + strings.Repeat("x", longLineLen-len(s)-2) + `";`
}

// source is a file's name and lines.
type source struct {
	name  string
	lines []string
}

// sources are files with indentation, spaces between tokens, tabs,
// trailing spaces and characters HTML escapes: the diff must show every
// character of each. Python and JavaScript are what chroma leaves bare
// whitespace in; Go is what it wraps in spans.
func sources() []source {
	return []source{
		{"tools/build.py", []string{
			"import subprocess",
			"",
			"",
			"def test_build():",
			`    out = subprocess.run(["make", "build"], check=True)`,
			"    if out.returncode != 0 and  not out.stdout:   ",
			"        raise SystemExit(1)  # two spaces before the hash",
		}},
		{"web/load.js", []string{
			`import { readFile } from "node:fs/promises";`,
			"",
			"export async function load(path) {",
			`  const text = await readFile(path, "utf8");`,
			`  if (text.length < 1 && path !== '') return [];`,
			longLine(),
			`  return text.split("\n").map((l) => l.trim());`,
			"}",
		}},
		{"cmd/tool/main.go", []string{
			"package main",
			"",
			`import "fmt"`,
			"",
			"func main() {",
			"\tfor i := 0; i < 3; i++ {",
			"\t\tfmt.Println(\"tab\\tinside\",\ti)",
			"\t}",
			"}",
		}},
	}
}

// sourcePatch is a patch adding the sources.
func sourcePatch() string {
	var b strings.Builder
	for _, f := range sources() {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n",
			f.name, f.name, f.name, len(f.lines))
		for _, l := range f.lines {
			b.WriteString("+" + l + "\n")
		}
	}
	return b.String()
}

// shownPatchLines are the lines of sourcePatch the page shows: all but
// git's header lines, which the file's heading says.
func shownPatchLines() []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimSuffix(sourcePatch(), "\n"), "\n") {
		if _, header := headerNote(l); header || strings.HasPrefix(l, "diff --git ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// sourceTask puts a task whose diff is sourcePatch and returns its ID.
func (f *fixture) sourceTask() string {
	const id = "50c0de01"
	start := time.Unix(1_700_000_000, 0)
	f.tasks.put(task.Task{ID: id, Workspace: "app", Harness: "claude", State: task.Succeeded, Mode: task.Work,
		Goal: "add the build tools", Patch: sourcePatch(), CreatedAt: start, StartedAt: start, EndedAt: start.Add(time.Minute)})
	return id
}

// shownLine is a diff line as the page shows it: its class, all its text
// (gutter and code) and its code's.
type shownLine struct {
	Class, Text, Src string
}

// diffLines parses the diff's lines out of the page's HTML. The page is
// HTML, not XML, but each diff's <pre class="code"> holds only spans and
// text that html/template escaped, which encoding/xml reads exactly.
func diffLines(t *testing.T, page string) []shownLine {
	t.Helper()
	var out []shownLine
	pres := regexp.MustCompile(`(?s)<pre class="code">.*?</pre>`).FindAllString(page, -1)
	if len(pres) == 0 {
		t.Fatalf("the page has no diff:\n%s", page)
	}
	for _, pre := range pres {
		d := xml.NewDecoder(strings.NewReader(pre))
		d.Strict = true
		var cur *shownLine
		var stack []string // the class of each open element
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("parse the diff: %v\n%s", err, pre)
			}
			switch tok := tok.(type) {
			case xml.StartElement:
				class := ""
				for _, a := range tok.Attr {
					if a.Name.Local == "class" {
						class = a.Value
					}
				}
				if rest, ok := strings.CutPrefix(class, "diffline "); ok {
					if cur != nil {
						t.Fatalf("a diff line inside another:\n%s", pre)
					}
					out = append(out, shownLine{Class: rest})
					cur = &out[len(out)-1]
				}
				stack = append(stack, class)
			case xml.EndElement:
				if strings.HasPrefix(stack[len(stack)-1], "diffline ") {
					cur = nil
				}
				stack = stack[:len(stack)-1]
			case xml.CharData:
				if cur == nil {
					if len(stack) > 1 || strings.TrimSpace(string(tok)) != "" {
						t.Fatalf("text %q outside a diff line:\n%s", tok, pre)
					}
					continue
				}
				cur.Text += string(tok)
				if slices.Contains(stack, "src") {
					cur.Src += string(tok)
				}
			}
		}
	}
	return out
}

// TestDiffShowsEveryCharacter: every line of the diff, in each language,
// holds exactly the patch's line (gutter and code), and its code exactly
// the source's line.
func TestDiffShowsEveryCharacter(t *testing.T) {
	f := newFixture(t)
	id := f.sourceTask()
	code, page := f.get(t, f.links.Task(id))
	if code != 200 {
		t.Fatalf("task page = %d:\n%s", code, page)
	}
	lines := diffLines(t, page)
	var gotText []string
	var gotSrc []string
	for _, l := range lines {
		gotText = append(gotText, l.Text)
		if l.Class == "add" {
			gotSrc = append(gotSrc, l.Src)
		}
	}
	wantText := shownPatchLines()
	if diff := cmp.Diff(wantText, gotText); diff != "" {
		t.Errorf("the diff's lines differ from the patch's (-patch +page):\n%s", diff)
	}
	var wantSrc []string
	for _, s := range sources() {
		wantSrc = append(wantSrc, s.lines...)
	}
	if diff := cmp.Diff(wantSrc, gotSrc); diff != "" {
		t.Errorf("the added lines' code differs from the sources (-source +page):\n%s", diff)
	}
	// The code is highlighted, in each language.
	for _, want := range []string{`<span class="kn">import</span>`, `<span class="kd">function</span>`, `<span class="kd">func</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestDiffClassesAreNotChromas: the classes the page gives its diff's own
// elements have no rule in chroma's stylesheet (whose .chroma .line is a
// flex box, which once ate the spaces between tokens).
func TestDiffClassesAreNotChromas(t *testing.T) {
	css, err := codeCSS()
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"file", "code", "diffline", "lno", "mark", "src", "add", "del", "ctx", "hunk", "meta", "wide", "filehead", "fname"} {
		if regexp.MustCompile(`\.` + class + `\b`).Match(css) {
			t.Errorf("chroma's stylesheet styles .%s, a class of the page's diff", class)
		}
	}
}

// TestCodeKeepsEveryCharacter: in every language chroma knows, a line's
// tokens put together are the line, spaces, tabs and all.
func TestCodeKeepsEveryCharacter(t *testing.T) {
	lines := []string{
		"    if a  <  b:\treturn  'x'   ",
		"\tfn(x, y) { return x + y; }  // done",
		"  <div class=\"a\">  &amp;  </div>",
	}
	if n := len(lexers.GlobalLexerRegistry.Lexers); n < 100 {
		t.Fatalf("chroma knows only %d languages", n)
	}
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		name := l.Config().Name
		lexer := chroma.Coalesce(l)
		for _, line := range lines {
			var got strings.Builder
			for _, tok := range code(lexer, line) {
				got.WriteString(tok.Text)
			}
			if got.String() != line {
				t.Errorf("%s: the tokens of %q make %q", name, line, got.String())
			}
		}
	}
}
