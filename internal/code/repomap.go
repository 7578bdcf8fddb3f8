package code

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/tokens"
	"golang.org/x/sync/errgroup"
)

// Bounds of a map.
const (
	maxParseFile  = 512 << 10
	maxParseTotal = 32 << 20
	maxParsed     = 5000
)

// textExts are files without a grammar that get the line-based outline
// in the map; other files are listed by name only.
var textExts = set(".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".kt", ".kts", ".swift", ".scala",
	".lua", ".ex", ".exs", ".sh", ".bash", ".pl", ".r", ".jl", ".dart", ".zig", ".hs", ".ml", ".clj", ".erl", ".vue", ".svelte")

// Paths finds a workspace's directory; *workspace.Registry satisfies it.
type Paths interface {
	Path(name string) (string, error)
}

// Library reads the workspaces of a registry and caches their maps. It is
// safe for concurrent use.
type Library struct {
	paths  Paths
	mu     sync.Mutex
	spaces map[string]*space
}

// space is the cache of one workspace's map.
type space struct {
	mu    sync.Mutex
	fp    [32]byte
	files map[string]*parsed
	maps  map[int]string
}

// parsed is what the map keeps of one file.
type parsed struct {
	size   int64
	mtime  time.Time
	syms   []Symbol
	idents map[string]struct{}
}

// New makes a Library over the workspaces paths finds.
func New(paths Paths) *Library {
	return &Library{paths: paths, spaces: map[string]*space{}}
}

// ErrNotHere: the workspace lives on another engine; its files are not on
// this machine.
var ErrNotHere = errors.New("the workspace lives on another Docker engine, so its files cannot be read from here; ask a coding CLI (task_ask) instead")

// local is what a registry says of workspaces on other engines
// (*workspace.Registry implements it).
type local interface {
	Local(ctx context.Context, name string) bool
}

func (l *Library) open(ws string) (*Tree, error) {
	dir, err := l.paths.Path(ws)
	if err != nil {
		return nil, err
	}
	if lp, ok := l.paths.(local); ok && !lp.Local(context.Background(), ws) {
		return nil, fmt.Errorf("workspace %s: %w", ws, ErrNotHere)
	}
	return Open(dir)
}

// Read is Tree.Read on workspace ws.
func (l *Library) Read(ctx context.Context, ws, rel string, from, to int) (string, error) {
	t, err := l.open(ws)
	if err != nil {
		return "", err
	}
	defer t.Close()
	return t.Read(ctx, rel, from, to)
}

// Outline is Tree.Outline on workspace ws.
func (l *Library) Outline(ctx context.Context, ws, rel string) (string, error) {
	t, err := l.open(ws)
	if err != nil {
		return "", err
	}
	defer t.Close()
	return t.Outline(ctx, rel)
}

// Search is Tree.Search on workspace ws.
func (l *Library) Search(ctx context.Context, ws string, q Query) (string, error) {
	t, err := l.open(ws)
	if err != nil {
		return "", err
	}
	defer t.Close()
	return t.Search(ctx, q)
}

// Map is the map of workspace ws within budget tokens, from the cache
// when the tree has not changed since it was made.
func (l *Library) Map(ctx context.Context, ws string, budget int) (string, error) {
	t, err := l.open(ws)
	if err != nil {
		return "", err
	}
	defer t.Close()
	l.mu.Lock()
	sp := l.spaces[ws]
	if sp == nil {
		sp = &space{}
		l.spaces[ws] = sp
	}
	l.mu.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return t.mapWith(ctx, sp, budget)
}

func (t *Tree) mapWith(ctx context.Context, sp *space, budget int) (string, error) {
	files, cut, err := t.walk(ctx)
	if err != nil {
		return "", fmt.Errorf("code: map: %w", err)
	}
	fp := t.fingerprint(files)
	if fp == sp.fp && sp.maps != nil {
		if m, ok := sp.maps[budget]; ok {
			return m, nil
		}
	} else {
		if err := t.parseAll(ctx, sp, files); err != nil {
			return "", err
		}
		sp.fp, sp.maps = fp, map[int]string{}
	}
	m := render(files, sp.files, budget)
	if cut {
		m += fmt.Sprintf("\n(the workspace has more than %d files; only those were mapped)", maxWalk)
	}
	sp.maps[budget] = m
	return m, nil
}

// fingerprint identifies the state of the tree: its files' paths, sizes
// and modification times, and HEAD.
func (t *Tree) fingerprint(files []entry) [32]byte {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", f.path, f.size, f.mtime.UnixNano())
	}
	if head, _, _, err := t.readFile(".git/HEAD", 512); err == nil {
		h.Write(head)
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok && strings.HasPrefix(ref, "refs/") && !strings.Contains(ref, "..") {
			if id, _, _, err := t.readFile(".git/"+ref, 512); err == nil {
				h.Write(id)
			}
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// parseAll brings sp.files up to date with files, parsing only files that
// changed, in parallel.
func (t *Tree) parseAll(ctx context.Context, sp *space, files []entry) error {
	next := make(map[string]*parsed, len(files))
	var todo []entry
	total := int64(0)
	for _, f := range files {
		if !mapped(f.path) || f.size > maxParseFile || total+f.size > maxParseTotal || len(next)+len(todo) >= maxParsed {
			continue
		}
		total += f.size
		if p := sp.files[f.path]; p != nil && p.size == f.size && p.mtime.Equal(f.mtime) {
			next[f.path] = p
			continue
		}
		todo = append(todo, f)
	}
	results := make([]*parsed, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range todo {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			data, _, _, err := t.readFile(f.path, maxParseFile)
			if err != nil || isBinary(data) {
				return nil
			}
			p := &parsed{size: f.size, mtime: f.mtime, idents: identifiers(data)}
			if !isTest(f.path) {
				// Tests are read for what they mention, not listed
				// for what they define: that halves the parsing.
				p.syms = outline(f.path, data)
			}
			results[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("code: map: %w", err)
	}
	for i, f := range todo {
		if results[i] != nil {
			next[f.path] = results[i]
		}
	}
	sp.files = next
	return nil
}

// mapped tells the files the map parses.
func mapped(p string) bool {
	return languageOf(p) != "" || textExts[strings.ToLower(path.Ext(p))]
}

// isTest tells test files by their names.
func isTest(p string) bool {
	base := strings.ToLower(path.Base(p))
	stem := strings.TrimSuffix(base, path.Ext(base))
	return strings.HasSuffix(stem, "_test") || strings.HasPrefix(base, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		strings.Contains("/"+p, "/__tests__/")
}

// weight is how much a mention of a name says about the code, after
// aider's repo map: long compound names (camelCase, snake_case) are
// specific, names private by convention (_x, Go's lowercase) matter
// less outside their file, names defined in many files mean little.
func weight(name string, definers int, goFile bool) float64 {
	w := 1.0
	if len(name) >= 8 && (strings.Contains(name, "_") || strings.ToLower(name) != name && strings.ToUpper(name) != name) {
		w *= 10
	}
	if strings.HasPrefix(name, "_") || (goFile && name[0] >= 'a' && name[0] <= 'z') {
		w *= 0.1
	}
	if definers > 5 {
		w *= 0.1
	}
	return w / float64(definers)
}

// identifiers is the set of identifiers a source mentions.
func identifiers(src []byte) map[string]struct{} {
	out := map[string]struct{}{}
	for i := 0; i < len(src); {
		c := src[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && (isIdentStart(src[j]) || (src[j] >= '0' && src[j] <= '9')) {
			j++
		}
		if j-i >= 2 && j-i <= 64 {
			out[string(src[i:j])] = struct{}{}
		}
		i = j
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// ranked is a file with its score and its symbols' scores.
type ranked struct {
	path   string
	score  float64
	syms   []Symbol
	scores []float64
}

// rank scores every symbol by the other files that mention its name,
// shared among the files that define it, and every file by its symbols.
func rank(files map[string]*parsed) []ranked {
	definers := map[string]int{}
	for _, p := range files {
		seen := map[string]bool{}
		for _, s := range p.syms {
			if !seen[s.Name] {
				seen[s.Name] = true
				definers[s.Name]++
			}
		}
	}
	mentions := map[string]int{}
	for _, p := range files {
		for id := range p.idents {
			if definers[id] > 0 {
				mentions[id]++
			}
		}
	}
	out := make([]ranked, 0, len(files))
	for path, p := range files {
		r := ranked{path: path, syms: p.syms, scores: make([]float64, len(p.syms))}
		for i, s := range p.syms {
			others := mentions[s.Name]
			if _, self := p.idents[s.Name]; self {
				others--
			}
			if others > 0 {
				r.scores[i] = float64(others) * weight(s.Name, definers[s.Name], strings.HasSuffix(path, ".go"))
			}
			r.score += r.scores[i]
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ranked) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.syms), len(a.syms)); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return out
}

// render writes the map: ranked files with their best symbols, then the
// names of the other files, while it stays within budget tokens.
func render(files []entry, parsedFiles map[string]*parsed, budget int) string {
	perFile := min(max(budget/250, 2), 8)
	var b strings.Builder
	used := 0
	listed := map[string]bool{}
	add := func(chunk string) bool {
		n := tokens.Count(chunk)
		if used+n > budget {
			return false
		}
		b.WriteString(chunk)
		used += n
		return true
	}
	full := false
	for _, r := range rank(parsedFiles) {
		if len(r.syms) == 0 {
			continue
		}
		idx := make([]int, len(r.syms))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(r.scores[b], r.scores[a]) })
		idx = idx[:min(len(idx), perFile)]
		slices.Sort(idx)
		var c strings.Builder
		c.WriteString(sanitizeName(r.path) + "\n")
		for _, i := range idx {
			s := r.syms[i]
			indent := "  "
			if s.Member {
				indent = "    "
			}
			c.WriteString(indent + s.Sig + "\n")
		}
		if len(idx) < len(r.syms) {
			fmt.Fprintf(&c, "  …%d more\n", len(r.syms)-len(idx))
		}
		if !add(c.String()) {
			full = true
			break
		}
		listed[r.path] = true
	}
	rest := 0
	for _, f := range files {
		if listed[f.path] {
			continue
		}
		if full || !add(sanitizeName(f.path)+"\n") {
			full = true
			rest++
		}
	}
	if rest > 0 {
		fmt.Fprintf(&b, "…%d more files (code_map, code_search)\n", rest)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
