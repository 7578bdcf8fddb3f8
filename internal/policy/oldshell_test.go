package policy

// The hand-written POSIX-shell reader the policy used before it parsed
// command lines with mvdan.cc/sh (shell.go). It is kept only as the
// oracle of FuzzParserAgreement: the new reading must judge every line as
// the old one did, or more strictly. It shares unwrapInner (sh -c, eval,
// find -exec) with the new reader, which reads those behind wrappers too
// (sudo sh -c): the oracle is at least as strict as the old reader was.

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

// errOldSyntax is a command line the old reader refused (an unterminated
// quote or substitution).
var errOldSyntax = errors.New("unterminated quote or substitution")

// oldParseShell splits s into simple commands.
func oldParseShell(s string) (*line, error) {
	ln := &line{}
	if err := oldParseInto(ln, s, 0, false); err != nil {
		return nil, err
	}
	return ln, nil
}

func oldParseInto(ln *line, s string, depth int, nested bool) error {
	if depth > maxDepth {
		return fmt.Errorf("substitutions nested deeper than %d", maxDepth)
	}
	lx := oldLexer{s: s, depth: depth, ln: ln}
	toks, err := lx.run()
	if err != nil {
		return err
	}
	first := len(ln.cmds)
	oldGroup(ln, toks, nested)
	// Commands that run strings or other commands: parse what they run.
	for i := first; i < len(ln.cmds); i++ {
		if err := unwrapInner(ln, ln.cmds[i], depth, oldParseInto); err != nil {
			return err
		}
	}
	return nil
}

// oldToken is a word or an operator.
type oldToken struct {
	op string
	w  word
}

type oldLexer struct {
	s     string
	i     int
	depth int
	ln    *line
	toks  []oldToken
}

func (lx *oldLexer) run() ([]oldToken, error) {
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
			lx.toks = append(lx.toks, oldToken{w: w})
		}
	}
	return lx.toks, nil
}

func (lx *oldLexer) atWordStart() bool {
	return lx.i == 0 || strings.ContainsRune(" \t\r\n;&|()<>", rune(lx.s[lx.i-1]))
}

func (lx *oldLexer) peek(n int) byte {
	if lx.i+n < len(lx.s) {
		return lx.s[lx.i+n]
	}
	return 0
}

func (lx *oldLexer) op(op string, n int) {
	lx.toks = append(lx.toks, oldToken{op: op})
	lx.i += n
}

// redirOp reads a redirection operator; a file-descriptor number just
// before it was lexed as a word and is dropped here.
func (lx *oldLexer) redirOp() error {
	if n := len(lx.toks); n > 0 && lx.toks[n-1].op == "" && lx.i > 0 && isDigits(lx.toks[n-1].w.text) &&
		lx.s[lx.i-1] >= '0' && lx.s[lx.i-1] <= '9' {
		lx.toks = lx.toks[:n-1]
	}
	c := lx.s[lx.i]
	if lx.peek(1) == '(' {
		// Process substitution <(…) or >(…): a command of its own.
		lx.ln.markComplex("process substitution")
		end, err := oldMatchParen(lx.s, lx.i+1)
		if err != nil {
			return err
		}
		if err := oldParseInto(lx.ln, lx.s[lx.i+2:end], lx.depth+1, true); err != nil {
			return err
		}
		lx.toks = append(lx.toks, oldToken{w: word{text: lx.s[lx.i : end+1], dynamic: true}})
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

// word reads one word starting at lx.i.
func (lx *oldLexer) word() (word, error) {
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
				return w, errOldSyntax
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

func (lx *oldLexer) doubleQuoted(w *word, b *strings.Builder) error {
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
	return errOldSyntax
}

// dollar reads an expansion at lx.i (a '$').
func (lx *oldLexer) dollar(w *word, b *strings.Builder) error {
	s, i := lx.s, lx.i
	next := lx.peek(1)
	switch {
	case next == '(':
		end, err := oldMatchParen(s, i+1)
		if err != nil {
			return err
		}
		lx.ln.markComplex("command substitution")
		if err := oldParseInto(lx.ln, s[i+2:end], lx.depth+1, true); err != nil {
			return err
		}
		b.WriteString(s[i : end+1])
		lx.i = end + 1
	case next == '{':
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return errOldSyntax
		}
		inner := s[i+2 : i+2+end]
		if strings.ContainsAny(inner, "$`") {
			// ${x:-$(…)}: what runs inside is checked too.
			lx.ln.markComplex("command substitution")
			if err := oldParseInto(lx.ln, inner, lx.depth+1, true); err != nil {
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
			return errOldSyntax
		}
		b.WriteString(s[i : j+1])
		lx.i = j + 1
	case next == '"':
		lx.i++
		w.dynamic = true
		return lx.doubleQuoted(w, b)
	case oldIsNameByte(next) || strings.IndexByte("@*#?$!-", next) >= 0:
		j := i + 1
		if oldIsNameByte(next) && !(next >= '0' && next <= '9') {
			for j < len(s) && oldIsNameByte(s[j]) {
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

func oldIsNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (lx *oldLexer) backtick(w *word, b *strings.Builder) error {
	var inner strings.Builder
	j := lx.i + 1
	for ; j < len(lx.s) && lx.s[j] != '`'; j++ {
		if lx.s[j] == '\\' && j+1 < len(lx.s) {
			j++
		}
		inner.WriteByte(lx.s[j])
	}
	if j >= len(lx.s) {
		return errOldSyntax
	}
	lx.ln.markComplex("command substitution")
	if err := oldParseInto(lx.ln, inner.String(), lx.depth+1, true); err != nil {
		return err
	}
	b.WriteString(lx.s[lx.i : j+1])
	lx.i = j + 1
	w.dynamic = true
	return nil
}

// oldMatchParen finds the ')' that closes the '(' at s[open], skipping
// quoted text.
func oldMatchParen(s string, open int) (int, error) {
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			end := strings.IndexByte(s[j+1:], '\'')
			if end < 0 {
				return 0, errOldSyntax
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
				return 0, errOldSyntax
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
	return 0, errOldSyntax
}

// Words that open or close compound commands. At the start of a command
// they are dropped (the command after them is what runs) and the line is
// complex.
var oldKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "for": true,
	"case": true, "esac": true, "select": true, "function": true,
	"{": true, "}": true, "!": true, "time": true, "[[": true, "]]": true, "in": false,
}

// group turns oldTokens into simple commands.
func oldGroup(ln *line, toks []oldToken, nested bool) {
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
			if len(cur.args) == 0 && !w.dynamic && oldKeywords[w.text] {
				ln.markComplex("compound command")
				if w.text == "for" || w.text == "select" || w.text == "case" || w.text == "function" || w.text == "[[" {
					// for x in a b …: the words are not a command; keep them
					// as one (checked, never allowed by class).
					cur.args = append(cur.args, w)
				}
				continue
			}
			if len(cur.args) == 0 && oldIsAssignment(w) {
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

// oldIsAssignment: NAME=value.
func oldIsAssignment(w word) bool {
	eq := strings.IndexByte(w.text, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w.text[i]
		if !oldIsNameByte(c) || i == 0 && c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}
