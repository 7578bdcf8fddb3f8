package code

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// workspace writes files (path → content) into a new directory.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func open(t testing.TB, dir string) *Tree {
	t.Helper()
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

const goSource = `package demo

import "net/http"

// Server serves.
type Server struct {
	mux *http.ServeMux
}

func NewServer() *Server {
	return &Server{mux: http.NewServeMux()}
}

func (s *Server) Handle(p string, h http.Handler) { s.mux.Handle(p, h) }
`

func TestReadRefusesEscapes(t *testing.T) {
	outside := workspace(t, map[string]string{"secret.txt": "TOP SECRET"})
	dir := workspace(t, map[string]string{"main.go": goSource, "sub/a.go": "package sub\n", ".gitignore": ".env\n", ".env": "KEY=1\n", ".git/config": "[core]\n"})
	for name, target := range map[string]string{
		"passwd":  "/etc/passwd",
		"out":     filepath.Join(outside, "secret.txt"),
		"up":      "../../../../../../etc/passwd",
		"sub/rel": "../main.go",
		"gitcfg":  ".git/config",
		"outdir":  outside,
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := open(t, dir)
	for _, c := range []struct {
		path, want string
	}{
		{"../secret.txt", "leads outside"},
		{"sub/../../x", "leads outside"},
		{"/etc/passwd", "absolute"},
		{"passwd", "leads outside"},
		{"out", "leads outside"},
		{"up", "leads outside"},
		{"outdir/secret.txt", "leads outside"},
		{"sub/rel", "symbolic link to main.go"},
		{"gitcfg", "which the code tools do not read"},
		{".git/config", "which the code tools do not read"},
		{".env", "ignored by .gitignore"},
		{"fifo", "not a regular file"},
		{"main.go\n", ""},
		{"a\x1b[2Jb", "control characters"},
	} {
		out, err := tr.Read(t.Context(), c.path, 1, 0)
		if c.want == "" {
			if err != nil {
				t.Errorf("Read(%q): %v", c.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q) = %q, %v; want an error with %q", c.path, out, err, c.want)
		}
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("Read(%q): %v is not ErrRefused", c.path, err)
		}
		if strings.Contains(out, "root:") || strings.Contains(out, "TOP SECRET") {
			t.Errorf("Read(%q) leaked %q", c.path, out)
		}
	}
}

func TestRead(t *testing.T) {
	long := strings.Repeat("x", 5000)
	dir := workspace(t, map[string]string{"main.go": goSource, "bin.dat": "\x00\x01\x02ELF", "bad.txt": "ok\xff\xfe\x1b[31mred\n" + long + "\n"})
	tr := open(t, dir)
	out, err := tr.Read(t.Context(), "main.go", 10, 12)
	if err != nil {
		t.Fatal(err)
	}
	want := "main.go, lines 10-12 of 14:\n10\tfunc NewServer() *Server {\n11\t\treturn &Server{mux: http.NewServeMux()}\n12\t}"
	if out != want {
		t.Errorf("Read = %q, want %q", out, want)
	}
	if out, _ := tr.Read(t.Context(), "bin.dat", 0, 0); !strings.Contains(out, "binary file") {
		t.Errorf("binary: %q", out)
	}
	out, _ = tr.Read(t.Context(), "bad.txt", 0, 0)
	if strings.Contains(out, "\x1b") || !utf8.ValidString(out) || !strings.Contains(out, "…(+4600 bytes)") {
		t.Errorf("hostile text not sanitized: %q", out)
	}
}

func TestOutline(t *testing.T) {
	dir := workspace(t, map[string]string{
		"main.go":  goSource,
		"app.py":   "import os\n\nclass Store:\n    def get(self, k):\n        return k\n\n@cache\ndef load(path):\n    pass\n",
		"app.js":   "export function start() {}\nclass Cart {\n  add(item) {}\n}\nconst total = () => 0;\n",
		"app.ts":   "export interface User { name: string }\nexport type Id = string;\nexport class Repo {\n  find(id: Id): User { return null as any }\n}\n",
		"lib.rs":   "pub struct Point { x: i32 }\nimpl Point {\n    pub fn new() -> Self { Point { x: 0 } }\n}\npub trait Shape { fn area(&self) -> f64; }\n",
		"App.java": "package a;\npublic class App {\n  @Override\n  public String toString() { return \"\"; }\n  public App() {}\n}\n",
		"run.rb":   "class Runner\n  def go\n  end\nend\n",
	})
	tr := open(t, dir)
	for file, wants := range map[string][]string{
		"main.go":  {"1", "type Server struct", "func NewServer() *Server", "func (s *Server) Handle(p string, h http.Handler)"},
		"app.py":   {"class Store:", "  4-5\tdef get(self, k):", "def load(path):"},
		"app.js":   {"function start()", "class Cart", "  3-3\tadd(item)", "total = () => 0"},
		"app.ts":   {"interface User", "type Id = string;", "class Repo", "find(id: Id): User"},
		"lib.rs":   {"pub struct Point", "impl Point", "pub fn new() -> Self", "pub trait Shape", "fn area(&self) -> f64;"},
		"App.java": {"public class App", "public String toString()", "public App()"},
		"run.rb":   {"class Runner", "def go"},
	} {
		out, err := tr.Outline(t.Context(), file)
		if err != nil {
			t.Fatalf("Outline(%s): %v", file, err)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("Outline(%s) lacks %q:\n%s", file, w, out)
			}
		}
	}
}

func TestSearch(t *testing.T) {
	dir := workspace(t, map[string]string{"main.go": goSource, "README.md": "Handle things\n", "vendor.log": "Handle\n", ".gitignore": "*.log\n"})
	tr := open(t, dir)
	out, err := tr.Search(t.Context(), Query{Pattern: "s.mux.Handle(", Literal: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "main.go\n13-\t\n14:\tfunc (s *Server) Handle") || strings.Contains(out, "README") {
		t.Errorf("literal search:\n%s", out)
	}
	out, _ = tr.Search(t.Context(), Query{Pattern: "handle", IgnoreCase: true, Globs: []string{"*.md"}})
	if !strings.Contains(out, "README.md\n1:\tHandle things") || strings.Contains(out, "main.go") || strings.Contains(out, "vendor.log") {
		t.Errorf("glob search:\n%s", out)
	}
	if _, err := tr.Search(t.Context(), Query{Pattern: "(("}); err == nil {
		t.Error("a bad regexp is not an error")
	}
}

type dirPaths string

func (d dirPaths) Path(string) (string, error) { return string(d), nil }

func TestMapCache(t *testing.T) {
	dir := workspace(t, map[string]string{
		"server.go": goSource,
		"main.go":   "package demo\n\nfunc main() { s := NewServer(); s.Handle(\"/\", nil) }\n",
		"notes.txt": "hello\n",
	})
	l := New(dirPaths(dir))
	m1, err := l.Map(t.Context(), "demo", 500)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m1, "server.go\n") || !strings.Contains(m1, "func NewServer() *Server") || !strings.Contains(m1, "notes.txt") {
		t.Errorf("map (server.go, referenced from main.go, first):\n%s", m1)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra.py"), []byte("def helper():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m2, _ := l.Map(t.Context(), "demo", 500)
	if !strings.Contains(m2, "def helper():") {
		t.Errorf("the map did not notice a new file:\n%s", m2)
	}
	if m3, _ := l.Map(t.Context(), "demo", 20); len(m3) >= len(m2) {
		t.Errorf("a budget of 20 tokens did not shorten the map:\n%s", m3)
	}
}
