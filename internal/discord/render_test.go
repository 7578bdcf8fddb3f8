package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/chat"
)

func checkParts(t *testing.T, text string, max int, parts []string) {
	t.Helper()
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > max {
			t.Fatalf("part %d has %d characters (max %d)", i, n, max)
		}
		if !balanced(p) {
			t.Fatalf("part %d has unbalanced fences:\n%s", i, p)
		}
	}
	// Nothing is lost: the text's non-fence lines come out in order.
	var in, out []string
	for _, l := range strings.Split(text, "\n") {
		if !isFence(l) && l != "" {
			in = append(in, l)
		}
	}
	joined := strings.Join(parts, "\n")
	for _, l := range strings.Split(joined, "\n") {
		if !isFence(l) && l != "" {
			out = append(out, l)
		}
	}
	if strings.Join(in, "") != strings.Join(out, "") {
		t.Fatalf("text changed by splitting:\n%q\n%q", in, out)
	}
}

func TestSplit(t *testing.T) {
	code := "```go\n" + strings.Repeat("fmt.Println(\"a line of code that is long enough\")\n", 120) + "```"
	for _, tc := range []struct {
		name  string
		text  string
		parts int
	}{
		{"short", "hello", 1},
		{"exactly the limit", strings.Repeat("x", 2000), 1},
		{"lines", strings.Repeat("a line of prose that goes on\n", 200), 3},
		{"one long line", strings.Repeat("y", 4500), 3},
		{"fenced code", "Here is the code:\n" + code + "\nThat was it.", 4},
		{"unclosed fence", "```\n" + strings.Repeat("z\n", 10), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := Split(tc.text, MaxContent)
			if len(parts) != tc.parts {
				t.Errorf("%d parts; want %d", len(parts), tc.parts)
			}
			checkParts(t, tc.text, MaxContent, parts)
		})
	}
	parts := Split("intro\n"+code, MaxContent)
	for i, p := range parts[1:] {
		if !strings.HasPrefix(p, "```go\n") {
			t.Errorf("part %d does not reopen the go fence: %.30q", i+1, p)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("```go\nx\n```\nplain\n```\ny", 64)
	f.Add(strings.Repeat("é", 300), 100)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if max < 64 || max > 4000 || !utf8.ValidString(text) {
			return
		}
		checkParts(t, text, max, Split(text, max))
	})
}

func TestRenderDiffAndLongText(t *testing.T) {
	diff := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,100 +1,100 @@\n" + strings.Repeat("-old line\n+new line\n", 100)
	parts := render(chat.Reply{Text: "Done. Changes:\n```diff\n" + diff + "```\nReview it please."})
	if len(parts) != 1 || len(parts[0].files) != 1 || parts[0].files[0].Name != "changes.diff" {
		t.Fatalf("parts = %+v", parts)
	}
	if !strings.Contains(parts[0].content, "changes.diff (+100 −100 lines)") || strings.Contains(parts[0].content, "new line") {
		t.Fatalf("content = %q", parts[0].content)
	}
	if string(parts[0].files[0].Data) != diff {
		t.Fatalf("diff file differs")
	}

	short := render(chat.Reply{Text: "```diff\n-a\n+b\n```"})
	if len(short) != 1 || len(short[0].files) != 0 {
		t.Fatalf("short diff not inline: %+v", short)
	}

	long := strings.Repeat("output line\n", 1000)
	parts = render(chat.Reply{Text: long, Actions: []chat.Action{{Label: "Stop", Send: "/stop"}}})
	if len(parts) != 1 || len(parts[0].files) != 1 || parts[0].files[0].Name != "reply.txt" || len(parts[0].buttons) != 1 {
		t.Fatalf("long text: %d parts %+v", len(parts), parts[0].files)
	}
}

func TestRenderManyFiles(t *testing.T) {
	var files []chat.File
	for range 12 {
		files = append(files, chat.File{Name: "f.txt", Data: []byte("x")})
	}
	parts := render(chat.Reply{Text: "files", Files: files})
	if len(parts) != 2 || len(parts[0].files) != 10 || len(parts[1].files) != 2 {
		t.Fatalf("parts: %d", len(parts))
	}
}

func TestRenderSplitsFilesAtTheUploadLimit(t *testing.T) {
	big := make([]byte, 6<<20)
	files := []chat.File{{Name: "a.png", Data: big}, {Name: "b.png", Data: big}, {Name: "c.txt", Data: []byte("x")}}
	parts := render(chat.Reply{Text: "files", Files: files})
	if len(parts) != 2 || len(parts[0].files) != 1 || len(parts[1].files) != 2 || parts[1].files[0].Name != "b.png" {
		t.Fatalf("parts: %d; want a.png alone, then b.png and c.txt", len(parts))
	}
}

func TestContentTypeShowsPicturesInline(t *testing.T) {
	for name, want := range map[string]string{"shot.png": "image/png", "a.JPG": "image/jpeg", "x.webp": "image/webp", "x.svg": "application/octet-stream", "p.patch": "text/x-diff; charset=utf-8"} {
		if got := contentType(name); got != want {
			t.Errorf("contentType(%q) = %q; want %q", name, got, want)
		}
	}
}

func BenchmarkRenderLongReply(b *testing.B) {
	text := "Here is the change:\n```go\n" + strings.Repeat("\tfmt.Println(\"a line of code in a long reply\")\n", 150) + "```\nDone."
	b.ReportAllocs()
	for b.Loop() {
		render(chat.Reply{Text: text})
	}
}
