package policy

import (
	"errors"
	"fmt"
	"strings"
)

// A command line from the coding CLI is hostile text. The parser below
// reads it the way a POSIX shell would split it into simple commands, and
// reads it conservatively: whatever it cannot know (an expansion, a
// substitution, a subshell, control flow, a script run by sh -c or eval)
// makes the line complex, and a complex line is never allowed without the
// owner below the autonomous level. The deny list is still checked on
// every part it found, inside substitutions and sh -c strings too.

// maxDepth bounds nested substitutions and sh -c strings.
const maxDepth = 8

// errSyntax is a command line the shell itself would refuse (an
// unterminated quote or substitution).
var errSyntax = errors.New("unterminated quote or substitution")

// word is one shell word after quote removal.
type word struct {
	text string
	// dynamic: the word holds an expansion ($X, $(…), `…`, $'…', {a,b})
	// whose value is unknown here.
	dynamic bool
	// glob: unquoted *, ? or [.
	glob bool
	// tilde: starts with an unquoted ~.
	tilde bool
}

// redirect is a redirection of a simple command.
type redirect struct {
	op     string
	target word
}

// simple is one simple command: assignments, words, redirections.
type simple struct {
	env    []word
	args   []word
	redirs []redirect
	// nested: the command was found inside a substitution, a sh -c string,
	// eval or find -exec; it runs somewhere the line's order does not say.
	nested bool
}

// line is a parsed command line.
type line struct {
	cmds []simple
	// complex says why the line is more than simple commands joined by
	// ;, &&, ||, | and &; empty when it is not.
	complex string
}

func (l *line) markComplex(why string) {
	if l.complex == "" {
		l.complex = why
	}
}

// parseShell splits s into simple commands.
func parseShell(s string) (*line, error) {
	ln := &line{}
	if err := parseInto(ln, s, 0, false); err != nil {
		return nil, err
	}
	return ln, nil
}

func parseInto(ln *line, s string, depth int, nested bool) error {
	if depth > maxDepth {
		return fmt.Errorf("substitutions nested deeper than %d", maxDepth)
	}
	lx := lexer{s: s, depth: depth, ln: ln}
	toks, err := lx.run()
	if err != nil {
		return err
	}
	first := len(ln.cmds)
	group(ln, toks, nested)
	// Commands that run strings or other commands: parse what they run.
	for i := first; i < len(ln.cmds); i++ {
		if err := unwrapInner(ln, ln.cmds[i], depth); err != nil {
			return err
		}
	}
	return nil
}

// token is a word or an operator.
type token struct {
	op string
	w  word
}

type lexer struct {
	s     string
	i     int
	depth int
	ln    *line
	toks  []token
}

func (lx *lexer) run() ([]token, error) {
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.i++
		case c == '\n':
			lx.op("\n", 1)
		case c == ';':
			if lx.peek(1) == ';' {
				lx.ln.markComplex("case statement")
				lx.op(";;", 2)
			} else {
				lx.op(";", 1)
			}
		case c == '&':
			switch lx.peek(1) {
			case '&':
				lx.op("&&", 2)
			case '>':
				if lx.peek(2) == '>' {
					lx.op("&>>", 3)
				} else {
					lx.op("&>", 2)
				}
			default:
				lx.op("&", 1)
			}
		case c == '|':
			switch lx.peek(1) {
			case '|':
				lx.op("||", 2)
			case '&':
				lx.op("|&", 2)
			default:
				lx.op("|", 1)
			}
		case c == '(' || c == ')':
			lx.ln.markComplex("subshell or function")
			lx.op(string(c), 1)
		case c == '<' || c == '>':
			if err := lx.redirOp(); err != nil {
				return nil, err
			}
		case c == '#' && lx.atWordStart():
			// A comment to the end of the line. Its text is kept as words
			// (checked like any other) rather than trusted to be inert.
			lx.ln.markComplex("comment")
			lx.i++
		default:
			w, err := lx.word()
			if err != nil {
				return nil, err
			}
			lx.toks = append(lx.toks, token{w: w})
		}
	}
	return lx.toks, nil
}

func (lx *lexer) atWordStart() bool {
	return lx.i == 0 || strings.ContainsRune(" \t\r\n;&|()<>", rune(lx.s[lx.i-1]))
}

func (lx *lexer) peek(n int) byte {
	if lx.i+n < len(lx.s) {
		return lx.s[lx.i+n]
	}
	return 0
}

func (lx *lexer) op(op string, n int) {
	lx.toks = append(lx.toks, token{op: op})
	lx.i += n
}

// redirOp reads a redirection operator; a file-descriptor number just
// before it was lexed as a word and is dropped here.
func (lx *lexer) redirOp() error {
	if n := len(lx.toks); n > 0 && lx.toks[n-1].op == "" && lx.i > 0 && isDigits(lx.toks[n-1].w.text) &&
		lx.s[lx.i-1] >= '0' && lx.s[lx.i-1] <= '9' {
		lx.toks = lx.toks[:n-1]
	}
	c := lx.s[lx.i]
	if lx.peek(1) == '(' {
		// Process substitution <(…) or >(…): a command of its own.
		lx.ln.markComplex("process substitution")
		end, err := matchParen(lx.s, lx.i+1)
		if err != nil {
			return err
		}
		if err := parseInto(lx.ln, lx.s[lx.i+2:end], lx.depth+1, true); err != nil {
			return err
		}
		lx.toks = append(lx.toks, token{w: word{text: lx.s[lx.i : end+1], dynamic: true}})
		lx.i = end + 1
		return nil
	}
	for _, op := range []string{"<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"} {
		if op[0] == c && strings.HasPrefix(lx.s[lx.i:], op) {
			if strings.HasPrefix(op, "<<") && op != "<<<" {
				lx.ln.markComplex("here-document")
			}
			lx.op(op, len(op))
			return nil
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// word reads one word starting at lx.i.
func (lx *lexer) word() (word, error) {
	var w word
	var b strings.Builder
	start := lx.i
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		if strings.IndexByte(" \t\r\n;&|()<>", c) >= 0 {
			break
		}
		switch c {
		case '\\':
			if lx.i+1 >= len(lx.s) {
				b.WriteByte('\\')
				lx.i++
				continue
			}
			if lx.s[lx.i+1] != '\n' {
				b.WriteByte(lx.s[lx.i+1])
			}
			lx.i += 2
		case '\'':
			end := strings.IndexByte(lx.s[lx.i+1:], '\'')
			if end < 0 {
				return w, errSyntax
			}
			b.WriteString(lx.s[lx.i+1 : lx.i+1+end])
			lx.i += end + 2
		case '"':
			if err := lx.doubleQuoted(&w, &b); err != nil {
				return w, err
			}
		case '$':
			if err := lx.dollar(&w, &b); err != nil {
				return w, err
			}
		case '`':
			if err := lx.backtick(&w, &b); err != nil {
				return w, err
			}
		case '*', '?', '[':
			w.glob = true
			b.WriteByte(c)
			lx.i++
		case '{':
			// Brace expansion can make any word ({.,.}. is ..).
			w.dynamic = true
			b.WriteByte(c)
			lx.i++
		case '~':
			if lx.i == start {
				w.tilde = true
			}
			b.WriteByte(c)
			lx.i++
		default:
			b.WriteByte(c)
			lx.i++
		}
	}
	w.text = b.String()
	if w.text == "{" && lx.i-start == 1 {
		w.dynamic = false // the { of a group command
	}
	return w, nil
}

func (lx *lexer) doubleQuoted(w *word, b *strings.Builder) error {
	lx.i++ // opening quote
	for lx.i < len(lx.s) {
		c := lx.s[lx.i]
		switch c {
		case '"':
			lx.i++
			return nil
		case '\\':
			if lx.i+1 < len(lx.s) && strings.IndexByte("$`\"\\\n", lx.s[lx.i+1]) >= 0 {
				if lx.s[lx.i+1] != '\n' {
					b.WriteByte(lx.s[lx.i+1])
				}
				lx.i += 2
				continue
			}
			b.WriteByte('\\')
			lx.i++
		case '$':
			if err := lx.dollar(w, b); err != nil {
				return err
			}
		case '`':
			if err := lx.backtick(w, b); err != nil {
				return err
			}
		default:
			b.WriteByte(c)
			lx.i++
		}
	}
	return errSyntax
}

// dollar reads an expansion at lx.i (a '$').
func (lx *lexer) dollar(w *word, b *strings.Builder) error {
	s, i := lx.s, lx.i
	next := lx.peek(1)
	switch {
	case next == '(':
		end, err := matchParen(s, i+1)
		if err != nil {
			return err
		}
		lx.ln.markComplex("command substitution")
		if err := parseInto(lx.ln, s[i+2:end], lx.depth+1, true); err != nil {
			return err
		}
		b.WriteString(s[i : end+1])
		lx.i = end + 1
	case next == '{':
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return errSyntax
		}
		inner := s[i+2 : i+2+end]
		if strings.ContainsAny(inner, "$`") {
			// ${x:-$(…)}: what runs inside is checked too.
			lx.ln.markComplex("command substitution")
			if err := parseInto(lx.ln, inner, lx.depth+1, true); err != nil {
				return err
			}
		}
		b.WriteString(s[i : i+3+end])
		lx.i = i + 3 + end
	case next == '\'':
		// $'…' decodes escapes (\x67 is g): its value is not read here.
		j := i + 2
		for j < len(s) && s[j] != '\'' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return errSyntax
		}
		b.WriteString(s[i : j+1])
		lx.i = j + 1
	case next == '"':
		lx.i++
		w.dynamic = true
		return lx.doubleQuoted(w, b)
	case isNameByte(next) || strings.IndexByte("@*#?$!-", next) >= 0:
		j := i + 1
		if isNameByte(next) && !(next >= '0' && next <= '9') {
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
		} else {
			j++
		}
		b.WriteString(s[i:j])
		lx.i = j
	default:
		b.WriteByte('$')
		lx.i++
		return nil
	}
	w.dynamic = true
	return nil
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (lx *lexer) backtick(w *word, b *strings.Builder) error {
	var inner strings.Builder
	j := lx.i + 1
	for ; j < len(lx.s) && lx.s[j] != '`'; j++ {
		if lx.s[j] == '\\' && j+1 < len(lx.s) {
			j++
		}
		inner.WriteByte(lx.s[j])
	}
	if j >= len(lx.s) {
		return errSyntax
	}
	lx.ln.markComplex("command substitution")
	if err := parseInto(lx.ln, inner.String(), lx.depth+1, true); err != nil {
		return err
	}
	b.WriteString(lx.s[lx.i : j+1])
	lx.i = j + 1
	w.dynamic = true
	return nil
}

// matchParen finds the ')' that closes the '(' at s[open], skipping
// quoted text.
func matchParen(s string, open int) (int, error) {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			end := strings.IndexByte(s[j+1:], '\'')
			if end < 0 {
				return 0, errSyntax
			}
			j += end + 1
		case '"':
			k := j + 1
			for k < len(s) && s[k] != '"' {
				if s[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(s) {
				return 0, errSyntax
			}
			j = k
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, errSyntax
}

// Words that open or close compound commands. At the start of a command
// they are dropped (the command after them is what runs) and the line is
// complex.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "for": true,
	"case": true, "esac": true, "select": true, "function": true,
	"{": true, "}": true, "!": true, "time": true, "[[": true, "]]": true, "in": false,
}

// group turns tokens into simple commands.
func group(ln *line, toks []token, nested bool) {
	cur := simple{nested: nested}
	flush := func() {
		if len(cur.args) > 0 || len(cur.env) > 0 || len(cur.redirs) > 0 {
			ln.cmds = append(ln.cmds, cur)
		}
		cur = simple{nested: nested}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.op == "":
			w := t.w
			if len(cur.args) == 0 && !w.dynamic && keywords[w.text] {
				ln.markComplex("compound command")
				if w.text == "for" || w.text == "select" || w.text == "case" || w.text == "function" || w.text == "[[" {
					// for x in a b …: the words are not a command; keep them
					// as one (checked, never allowed by class).
					cur.args = append(cur.args, w)
				}
				continue
			}
			if len(cur.args) == 0 && isAssignment(w) {
				cur.env = append(cur.env, w)
				continue
			}
			cur.args = append(cur.args, w)
		case isRedirOp(t.op):
			r := redirect{op: t.op}
			if i+1 < len(toks) && toks[i+1].op == "" {
				r.target = toks[i+1].w
				i++
			}
			cur.redirs = append(cur.redirs, r)
		default:
			flush()
		}
	}
	flush()
}

func isRedirOp(op string) bool {
	switch op {
	case "<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<", "<<-", "<<<":
		return true
	}
	return false
}

// isAssignment: NAME=value.
func isAssignment(w word) bool {
	eq := strings.IndexByte(w.text, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w.text[i]
		if !isNameByte(c) || i == 0 && c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}

// Shells whose -c argument is a command line of its own.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "fish": true, "busybox": false}

// unwrapInner parses what a command runs as text: sh -c '…', eval …,
// find … -exec … ;, and xargs/env-style wrappers are handled by the deny
// checks (they look at every suffix of a wrapper's words).
func unwrapInner(ln *line, c simple, depth int) error {
	if len(c.args) == 0 {
		return nil
	}
	prog := base(c.args[0].text)
	switch {
	case shells[prog]:
		for i := 1; i < len(c.args); i++ {
			a := c.args[i].text
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
				if i+1 < len(c.args) {
					ln.markComplex(prog + " -c")
					if c.args[i+1].dynamic {
						return nil
					}
					return parseInto(ln, c.args[i+1].text, depth+1, true)
				}
			}
		}
		ln.markComplex("a shell running a script")
	case prog == "eval":
		ln.markComplex("eval")
		var parts []string
		for _, a := range c.args[1:] {
			parts = append(parts, a.text)
		}
		return parseInto(ln, strings.Join(parts, " "), depth+1, true)
	case prog == "find":
		for i := 1; i < len(c.args); i++ {
			switch c.args[i].text {
			case "-exec", "-execdir", "-ok", "-okdir":
				ln.markComplex("find " + c.args[i].text)
				inner := simple{nested: true}
				for j := i + 1; j < len(c.args); j++ {
					if t := c.args[j].text; t == ";" || t == "+" {
						break
					}
					inner.args = append(inner.args, c.args[j])
				}
				if len(inner.args) > 0 {
					ln.cmds = append(ln.cmds, inner)
				}
			}
		}
	case prog == "source" || prog == ".":
		ln.markComplex("a sourced script")
	}
	return nil
}

// base is the last element of a program path (/usr/bin/git is git).
func base(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
