package code

import (
	"bytes"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
	golang "github.com/tree-sitter/tree-sitter-go/bindings/go"
	java "github.com/tree-sitter/tree-sitter-java/bindings/go"
	javascript "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
	rust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	typescript "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// parseTimeout bounds the parse of one file; a file the parser cannot
// finish in time gets the line-based outline.
const parseTimeout = 100 * time.Millisecond

// parseChunk is how much source the parser is handed at a time.
const parseChunk = 4096

// Symbol is one definition in a file.
type Symbol struct {
	Name string
	// Line is where it starts, from 1; End where it ends.
	Line, End int
	// Sig is its first line, trimmed and sanitized.
	Sig string
	// Member: a method or field of a type above it, not top-level.
	Member bool
}

// grammar says which nodes of a language's syntax tree are definitions.
type grammar struct {
	lang func() *sitter.Language
	// defs are the node kinds that define a named symbol.
	defs map[string]bool
	// nameField overrides the field holding a definition's name ("name").
	nameField map[string]string
	// unwrap are kinds whose children are looked at as if they stood in
	// their place (export, decorators, declaration groups).
	unwrap map[string]bool
	// prefix is put before the signature of a kind (Go's type specs).
	prefix map[string]string
}

func set(kinds ...string) map[string]bool {
	m := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		m[k] = true
	}
	return m
}

func language(ptr func() unsafe.Pointer) func() *sitter.Language {
	return sync.OnceValue(func() *sitter.Language { return sitter.NewLanguage(ptr()) })
}

var (
	jsDefs = []string{"function_declaration", "generator_function_declaration", "class_declaration",
		"method_definition", "variable_declarator"}
	jsUnwrap = []string{"export_statement", "lexical_declaration", "variable_declaration"}
	tsDefs   = append([]string{"interface_declaration", "type_alias_declaration", "enum_declaration",
		"abstract_class_declaration", "abstract_method_signature", "function_signature", "internal_module"}, jsDefs...)

	grammars = map[string]*grammar{
		"go": {lang: language(golang.Language),
			defs:   set("function_declaration", "method_declaration", "type_spec", "type_alias", "const_spec", "var_spec"),
			unwrap: set("type_declaration", "const_declaration", "var_declaration"),
			prefix: map[string]string{"type_spec": "type ", "type_alias": "type ", "const_spec": "const ", "var_spec": "var "}},
		"python": {lang: language(python.Language),
			defs:   set("function_definition", "class_definition"),
			unwrap: set("decorated_definition")},
		"javascript": {lang: language(javascript.Language), defs: set(jsDefs...), unwrap: set(jsUnwrap...)},
		"typescript": {lang: language(typescript.LanguageTypescript), defs: set(tsDefs...), unwrap: set(jsUnwrap...)},
		"tsx":        {lang: language(typescript.LanguageTSX), defs: set(tsDefs...), unwrap: set(jsUnwrap...)},
		"rust": {lang: language(rust.Language),
			defs: set("function_item", "function_signature_item", "struct_item", "enum_item", "union_item", "trait_item",
				"impl_item", "mod_item", "const_item", "static_item", "type_item", "macro_definition"),
			nameField: map[string]string{"impl_item": "type"}},
		"java": {lang: language(java.Language),
			defs: set("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
				"annotation_type_declaration", "method_declaration", "constructor_declaration"),
			unwrap: set("enum_body_declarations")},
	}

	extensions = map[string]string{
		".go": "go", ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
		".jsx": "javascript", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
		".rs": "rust", ".java": "java",
	}
)

// languageOf is the grammar's name for a file, "" when none parses it.
func languageOf(name string) string {
	return extensions[strings.ToLower(path.Ext(name))]
}

// outline lists the definitions of a file's source: with tree-sitter for
// the languages it knows, line-based for the rest.
func outline(name string, src []byte) []Symbol {
	if g := grammars[languageOf(name)]; g != nil {
		if syms, ok := g.outline(src); ok {
			return syms
		}
	}
	return lineOutline(name, src)
}

func (g *grammar) outline(src []byte) ([]Symbol, bool) {
	libcAllocator()
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(g.lang()); err != nil {
		return nil, false
	}
	deadline := time.Now().Add(parseTimeout)
	tree := p.ParseWithOptions(func(off int, _ sitter.Point) []byte {
		// The binding copies what this returns into C memory at every
		// call: small chunks keep that linear in the file's size.
		if off >= len(src) {
			return nil
		}
		return src[off:min(off+parseChunk, len(src))]
	}, nil, &sitter.ParseOptions{ProgressCallback: func(sitter.ParseState) bool { return time.Now().After(deadline) }})
	if tree == nil {
		return nil, false
	}
	defer tree.Close()
	var out []Symbol
	g.walk(tree.RootNode(), src, false, &out)
	return out, true
}

// maxSymbols bounds the symbols of one file.
const maxSymbols = 500

func (g *grammar) walk(n *sitter.Node, src []byte, member bool, out *[]Symbol) {
	count := n.NamedChildCount()
	for i := uint(0); i < count && len(*out) < maxSymbols; i++ {
		c := n.NamedChild(i)
		if c == nil {
			continue
		}
		kind := c.Kind()
		switch {
		case g.unwrap[kind]:
			g.walk(c, src, member, out)
		case g.defs[kind]:
			field := "name"
			if f, ok := g.nameField[kind]; ok {
				field = f
			}
			nameNode := c.ChildByFieldName(field)
			if nameNode == nil {
				continue
			}
			name := sanitizeName(nameNode.Utf8Text(src))
			if kind == "variable_declarator" && member {
				continue
			}
			start, end := c.StartPosition(), c.EndPosition()
			head := src[c.StartByte():c.EndByte()]
			body := c.ChildByFieldName("body")
			if body != nil && body.StartByte() > c.StartByte() && kind != "type_spec" {
				head = src[c.StartByte():body.StartByte()]
			}
			*out = append(*out, Symbol{Name: name, Line: int(start.Row) + 1, End: int(end.Row) + 1,
				Sig: g.prefix[kind] + signature(head), Member: member})
			if !member && body != nil {
				g.walk(body, src, true, out)
			}
		}
	}
}

// signature is a definition's first line that is not an annotation,
// without an opening brace, at most 160 bytes.
func signature(text []byte) string {
	for len(text) > 0 {
		line, rest, _ := bytes.Cut(text, []byte("\n"))
		text = rest
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "#[") {
			continue
		}
		s = strings.TrimSpace(strings.TrimSuffix(s, "{"))
		if len(s) > 160 {
			s = s[:160] + "…"
		}
		return sanitizeName(s)
	}
	return ""
}

// lineDef finds definitions by their look in languages without a parser
// here: keywords that start a definition, and Markdown headings.
var (
	lineDef = regexp.MustCompile(`^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:public\s+|private\s+|static\s+|async\s+)*(?:def|class|func|function|fn|interface|type|struct|enum|trait|module|sub|proc|impl|object|record)\s+([A-Za-z_][A-Za-z0-9_.]*)`)
	heading = regexp.MustCompile(`^(#{1,3})\s+(\S.*)$`)
)

// lineOutline is the outline of a file without a grammar.
func lineOutline(name string, src []byte) []Symbol {
	md := strings.EqualFold(path.Ext(name), ".md")
	var out []Symbol
	n := 0
	for len(src) > 0 && len(out) < maxSymbols {
		line, rest, _ := bytes.Cut(src, []byte("\n"))
		src = rest
		n++
		if len(line) > maxLine {
			continue
		}
		if md {
			if m := heading.FindSubmatch(line); m != nil {
				out = append(out, Symbol{Name: sanitizeName(string(m[2])), Line: n, End: n, Sig: sanitizeName(string(bytes.TrimSpace(line))), Member: len(m[1]) > 1})
			}
			continue
		}
		if m := lineDef.FindSubmatch(line); m != nil {
			out = append(out, Symbol{Name: sanitizeName(string(m[1])), Line: n, End: n, Sig: signature(line), Member: line[0] == ' ' || line[0] == '\t'})
		}
	}
	return out
}
