package policy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A command line from the coding CLI is hostile text. It is parsed the way
// bash parses it, by mvdan.cc/sh's syntax package (the parser behind
// shfmt), and read conservatively: whatever the policy cannot know (an
// expansion, a substitution, a subshell, control flow, a function, a
// here-document, a script run by sh -c or eval) makes the line complex, and
// a complex line is never allowed without the owner below the autonomous
// level. The deny list is still checked on every part found, inside
// substitutions, sh -c strings, here-documents and comments too.

// maxDepth bounds nested substitutions and sh -c strings.
const maxDepth = 8

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
	// eval, find -exec, a here-document or a comment; it runs somewhere the
	// line's order does not say (or not at all).
	nested bool
}

// line is a parsed command line.
type line struct {
	cmds []simple
	// complex says why the line is more than simple commands joined by
	// ;, &&, ||, | and &; empty when it is not.
	complex string
	// unknown says why the line cannot be checked against the deny list
	// at all; empty when it can.
	unknown string
}

func (l *line) markComplex(why string) {
	if l.complex == "" {
		l.complex = why
	}
}

// parseShell splits s into simple commands. A line bash would refuse is
// an error.
func parseShell(s string) (_ *line, err error) {
	defer func() {
		// The line is hostile and the parser is not ours: a panic in it
		// is a line the policy cannot read, never a crash.
		if p := recover(); p != nil {
			err = fmt.Errorf("the shell parser failed on it (%v)", p)
		}
	}()
	ln := &line{}
	if err := parseInto(ln, s, 0, false); err != nil {
		return nil, err
	}
	if len(ln.cmds) == 0 && strings.TrimSpace(s) != "" {
		// \<newline>, a lone #: nothing a CLI would ask to run.
		return nil, errNoCommand
	}
	return ln, nil
}

// errNoCommand is a line that is not empty but holds no command.
var errNoCommand = errors.New("it holds no command")

// errTooDeep is a line whose substitutions or sh -c strings nest deeper
// than maxDepth.
var errTooDeep = fmt.Errorf("substitutions nested deeper than %d", maxDepth)

// errNUL is a line that holds a NUL byte.
var errNUL = errors.New("the command holds a NUL byte")

// parseInto parses s (a whole line, or a string a command runs as one)
// and adds its commands to ln.
func parseInto(ln *line, s string, depth int, nested bool) error {
	if depth > maxDepth {
		return errTooDeep
	}
	if strings.IndexByte(s, 0) >= 0 {
		// No shell receives one (argv strings end there), and the parser
		// drops it: g<NUL>it would read as git.
		return errNUL
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).
		Parse(strings.NewReader(s), "")
	if err != nil {
		return fmt.Errorf("bash would not run it: %w", err)
	}
	r := &reader{src: s, ln: ln, depth: depth}
	if err := r.stmts(nested, f.Stmts); err != nil {
		return err
	}
	r.comments(f.Last)
	return nil
}

// reader turns one parsed string into simple commands.
type reader struct {
	src   string
	ln    *line
	depth int
}

// raw is the source text of a node.
func (r *reader) raw(n syntax.Node) string {
	if w, ok := n.(*syntax.Word); ok && len(w.Parts) == 0 {
		return ""
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(r.src) || start > end {
		return "?"
	}
	return r.src[start:end]
}

// stmts reads lists of statements in order.
func (r *reader) stmts(nested bool, lists ...[]*syntax.Stmt) error {
	for _, ss := range lists {
		for _, s := range ss {
			if err := r.stmt(s, nested); err != nil {
				return err
			}
		}
	}
	return nil
}

// comments: a comment is never run, but its text is checked against the
// deny list like any other (as a command line of its own, as far as it
// reads as one) rather than trusted to be inert.
func (r *reader) comments(lists ...[]syntax.Comment) {
	for _, cs := range lists {
		for _, c := range cs {
			r.ln.markComplex("comment")
			r.bestEffort(c.Text)
		}
	}
}

// bestEffort adds the commands of text that may or may not be shell (a
// comment, a here-document for a program that is not a shell), for the
// deny list.
//
// Text that does not parse as a whole is read in the pieces between its
// operators (a comment's "&gh" holds gh).
func (r *reader) bestEffort(text string) {
	tmp := &line{}
	if err := parseInto(tmp, text, r.depth+1, true); err == nil {
		r.ln.cmds = append(r.ln.cmds, tmp.cmds...)
		return
	}
	pieces := strings.FieldsFunc(text, func(c rune) bool { return strings.ContainsRune(";&|()\n", c) })
	for _, p := range pieces {
		tmp := &line{}
		if err := parseInto(tmp, p, r.depth+1, true); err == nil {
			r.ln.cmds = append(r.ln.cmds, tmp.cmds...)
		}
	}
}

func (r *reader) stmt(s *syntax.Stmt, nested bool) error {
	r.comments(s.Comments)
	if s.Negated {
		r.ln.markComplex("compound command")
	}
	if s.Coprocess || s.Disown {
		r.ln.markComplex("coprocess")
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok || s.Cmd == nil {
		return r.call(call, s.Redirs, nested)
	}
	// The redirections of a compound command: a command of their own.
	if len(s.Redirs) > 0 {
		if err := r.call(nil, s.Redirs, nested); err != nil {
			return err
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		// &&, ||, | and |&: plain.
		if err := r.stmt(c.X, nested); err != nil {
			return err
		}
		return r.stmt(c.Y, nested)
	case *syntax.Subshell:
		r.ln.markComplex("subshell or function")
		r.comments(c.Last)
		return r.stmts(nested, c.Stmts)
	case *syntax.Block:
		r.ln.markComplex("compound command")
		r.comments(c.Last)
		return r.stmts(nested, c.Stmts)
	case *syntax.FuncDecl:
		// A function shadows the program it is named for: its name is
		// checked as a command of its own, as the old reader did.
		r.ln.markComplex("subshell or function")
		names := c.Names
		if c.Name != nil {
			names = append(names, c.Name)
		}
		for _, n := range names {
			var w word
			var b strings.Builder
			unescapeBare(n.Value, &w, &b)
			w.text = b.String()
			r.ln.cmds = append(r.ln.cmds, simple{nested: nested, args: []word{w}})
		}
		return r.stmt(c.Body, nested)
	case *syntax.IfClause:
		r.ln.markComplex("compound command")
		for ic := c; ic != nil; ic = ic.Else {
			r.comments(ic.CondLast, ic.ThenLast, ic.Last)
			if err := r.stmts(nested, ic.Cond, ic.Then); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		r.ln.markComplex("compound command")
		r.comments(c.CondLast, c.DoLast)
		return r.stmts(nested, c.Cond, c.Do)
	case *syntax.ForClause:
		r.ln.markComplex("compound command")
		r.comments(c.DoLast)
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			// for x in a b …: the words are not a command; they are kept
			// as one (checked, never allowed by class).
			kw := "for"
			if c.Select {
				kw = "select"
			}
			sc := simple{nested: nested, args: []word{{text: kw}, {text: l.Name.Value}}}
			for _, it := range l.Items {
				w, err := r.word(it)
				if err != nil {
					return err
				}
				sc.args = append(sc.args, w)
			}
			r.ln.cmds = append(r.ln.cmds, sc)
		case *syntax.CStyleLoop:
			if err := r.arith(l); err != nil {
				return err
			}
		default:
			return fmt.Errorf("a loop of an unknown kind (%T)", c.Loop)
		}
		return r.stmts(nested, c.Do)
	case *syntax.CaseClause:
		r.ln.markComplex("case statement")
		r.comments(c.Last)
		w, err := r.word(c.Word)
		if err != nil {
			return err
		}
		r.ln.cmds = append(r.ln.cmds, simple{nested: nested, args: []word{{text: "case"}, w}})
		for _, it := range c.Items {
			r.comments(it.Comments, it.Last)
			for _, p := range it.Patterns {
				if _, err := r.word(p); err != nil {
					return err
				}
			}
			if err := r.stmts(nested, it.Stmts); err != nil {
				return err
			}
		}
		return nil
	case *syntax.TestClause:
		// [[ … ]]: its words are kept as one command (checked, never
		// allowed by class).
		r.ln.markComplex("compound command")
		sc := simple{nested: nested, args: []word{{text: "[["}}}
		var werr error
		syntax.Walk(c.X, func(n syntax.Node) bool {
			if bt, ok := n.(*syntax.BinaryTest); ok {
				switch bt.Op {
				case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
					r.hiddenSubst() // [[ x -eq y ]] is arithmetic
				}
			}
			w, ok := n.(*syntax.Word)
			if !ok || werr != nil {
				return werr == nil
			}
			cw, err := r.word(w)
			if err != nil {
				werr = err
			}
			sc.args = append(sc.args, cw)
			return false
		})
		if werr != nil {
			return werr
		}
		r.ln.cmds = append(r.ln.cmds, sc)
		return nil
	case *syntax.ArithmCmd:
		// ((…)): a command of its own (never allowed by class).
		if err := r.arith(c); err != nil {
			return err
		}
		sc := simple{nested: nested, args: []word{{text: "(("}}}
		if c.X != nil {
			sc.args = append(sc.args, word{text: r.raw(c.X), dynamic: true})
		}
		r.ln.cmds = append(r.ln.cmds, sc)
		return nil
	case *syntax.LetClause:
		sc := simple{nested: nested, args: []word{{text: "let"}}}
		for _, x := range c.Exprs {
			if err := r.arith(x); err != nil {
				return err
			}
			sc.args = append(sc.args, word{text: r.raw(x), dynamic: true})
		}
		r.ln.cmds = append(r.ln.cmds, sc)
		return nil
	case *syntax.DeclClause:
		// export, declare, local, readonly, typeset: a command whose words
		// are its assignments.
		sc := simple{nested: nested, args: []word{{text: c.Variant.Value}}}
		for _, as := range c.Args {
			if as.Naked && as.Name == nil && as.Value != nil {
				if o := as.Value.Lit(); strings.HasPrefix(o, "-") && strings.Contains(o, "i") {
					r.hiddenSubst() // declare -i x=…: arithmetic
				}
			}
			w, err := r.assign(as)
			if err != nil {
				return err
			}
			sc.args = append(sc.args, w)
		}
		r.ln.cmds = append(r.ln.cmds, sc)
		return nil
	case *syntax.TimeClause:
		r.ln.markComplex("compound command")
		if c.Stmt == nil {
			return nil
		}
		return r.stmt(c.Stmt, nested)
	case *syntax.CoprocClause:
		r.ln.markComplex("coprocess")
		if c.Name != nil {
			if _, err := r.word(c.Name); err != nil {
				return err
			}
		}
		return r.stmt(c.Stmt, nested)
	default:
		return fmt.Errorf("a shell construct Fetch does not read (%T)", s.Cmd)
	}
}

// call is a simple command (c may be nil: redirections alone).
func (r *reader) call(c *syntax.CallExpr, redirs []*syntax.Redirect, nested bool) error {
	sc := simple{nested: nested}
	if c != nil {
		for _, as := range c.Assigns {
			w, err := r.assign(as)
			if err != nil {
				return err
			}
			sc.env = append(sc.env, w)
		}
		for _, a := range c.Args {
			w, err := r.word(a)
			if err != nil {
				return err
			}
			sc.args = append(sc.args, w)
		}
	}
	if len(sc.args) > 0 && (assignLike(sc.args[0].text) || keywords[sc.args[0].text]) {
		// "A=1" cmd, "!" cmd, \if cmd: bash runs a program named A=1,
		// ! or if; a careless reader (the old one) sets A or drops the
		// keyword and runs cmd.
		r.markUnknown("the program to run is named like an assignment or a keyword (" + clip(sc.args[0].text, 60) + ")")
		if len(sc.args) > 1 {
			// The rest is checked as the command it looks like.
			r.ln.cmds = append(r.ln.cmds, simple{args: sc.args[1:], nested: true})
		}
	}
	var bodies []stdin
	for _, rd := range redirs {
		op := rd.Op.String()
		if !isRedirOp(op) {
			op = ">" // an operator of another shell: a write, as far as the policy knows
		}
		t, err := r.word(rd.Word)
		if err != nil {
			return err
		}
		sc.redirs = append(sc.redirs, redirect{op: op, target: t})
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			r.ln.markComplex("here-document")
			if rd.Hdoc != nil {
				// What runs inside an unquoted here-document ($(…)).
				if _, err := r.word(rd.Hdoc); err != nil {
					return err
				}
			}
			bodies = append(bodies, stdin{rd, t})
		case syntax.WordHdoc:
			bodies = append(bodies, stdin{rd, t})
		}
	}
	if len(sc.args) > 0 || len(sc.env) > 0 || len(sc.redirs) > 0 {
		r.ln.cmds = append(r.ln.cmds, sc)
	}
	if err := unwrapInner(r.ln, sc, r.depth, parseInto); err != nil {
		return err
	}
	return r.stdinScripts(sc, bodies)
}

// keywords are bash's reserved words; quoted (or escaped), one is a
// program's name.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "for": true,
	"case": true, "esac": true, "select": true, "function": true,
	"{": true, "}": true, "!": true, "time": true, "[[": true, "]]": true, "coproc": true,
}

// assignLike: NAME=….
func assignLike(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range []byte(name) {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// stdin is a here-document or here-string and its target word.
type stdin struct {
	rd     *syntax.Redirect
	target word
}

// stdinScripts reads what a here-document or here-string feeds a
// command. A shell runs it: its commands are parsed like the line's, and a
// body bash would refuse is an error. Anything else may run it too (an
// interpreter, a wrapper of a shell): its body is checked against the deny
// list as far as it reads as shell.
func (r *reader) stdinScripts(sc simple, bodies []stdin) error {
	if len(bodies) == 0 {
		return nil
	}
	// A program that is an expansion may be a shell.
	shell := len(sc.args) > 0 && sc.args[0].dynamic
	for _, a := range sc.args {
		if shells[base(a.text)] || base(a.text) == "busybox" {
			shell = true
		}
	}
	for _, in := range bodies {
		rd := in.rd
		var text string
		if rd.Op == syntax.WordHdoc {
			if !shell {
				continue // a here-string to another program is data, as before
			}
			if in.target.dynamic {
				r.markUnknown("the script a shell reads holds expansions (" + clip(in.target.text, 60) + ")")
				continue
			}
			text = in.target.text
		} else if rd.Hdoc != nil {
			text = r.hdocText(rd)
		} else {
			continue
		}
		if !shell {
			r.bestEffort(text)
			continue
		}
		r.ln.markComplex("a shell running a script")
		if err := parseInto(r.ln, text, r.depth+1, true); err != nil {
			return err
		}
	}
	return nil
}

// hdocText is a here-document's body as the program reading it gets it:
// as written when its delimiter is quoted; otherwise with \$, \`, \\ and
// \newline unescaped and its expansions left as written (they were read
// as commands of their own).
func (r *reader) hdocText(rd *syntax.Redirect) string {
	quoted := false
	for _, p := range rd.Word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, "\\")
		default:
			quoted = true
		}
	}
	if quoted {
		return r.raw(rd.Hdoc)
	}
	var b strings.Builder
	for _, p := range rd.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			b.WriteString(r.raw(p))
			continue
		}
		unescape(lit.Value, "$`\\\n", &b)
	}
	return b.String()
}

// assign is NAME=value (or NAME+=value, NAME[i]=value, NAME=(…)) as a word.
func (r *reader) assign(as *syntax.Assign) (word, error) {
	var w word
	if as.Name != nil {
		w.text = as.Name.Value
		if !assignLike(w.text + "=") {
			// The parser takes 0=x for an assignment; bash runs a program
			// named 0=x.
			r.markUnknown("an assignment to " + clip(w.text, 30) + ", which bash does not take for a name")
		}
	}
	if as.Index != nil {
		if err := r.inside(as.Index); err != nil {
			return w, err
		}
		if expands(as.Index) {
			// a[$(…)]=, a[$i]=: arithmetic whose effects are not known here.
			r.markUnknown("an array index holds expansions (" + clip(r.raw(as.Index), 60) + ")")
		}
		w.text += "[" + r.raw(as.Index) + "]"
		w.dynamic = true
	}
	if as.Naked {
		if as.Name == nil && as.Value != nil {
			return r.word(as.Value) // declare -x: an option
		}
		return w, nil
	}
	if as.Append {
		w.text += "+="
	} else {
		w.text += "="
	}
	switch {
	case as.Array != nil:
		if expands(as.Array) {
			r.markUnknown("an array holds expansions (" + clip(r.raw(as.Array), 60) + ")")
		}
		// Its words are checked as a command of their own (never allowed
		// by class), as the old reader read a=(…).
		elems := simple{nested: true}
		r.comments(as.Array.Last)
		for _, el := range as.Array.Elems {
			r.comments(el.Comments)
			if el.Index != nil {
				if err := r.inside(el.Index); err != nil {
					return w, err
				}
			}
			if el.Value != nil {
				v, err := r.word(el.Value)
				if err != nil {
					return w, err
				}
				elems.args = append(elems.args, v)
			}
		}
		if len(elems.args) > 0 {
			r.ln.cmds = append(r.ln.cmds, elems)
		}
		w.text += r.raw(as.Array)
		w.dynamic = true
	case as.Value != nil:
		if slices.ContainsFunc(as.Value.Parts, func(p syntax.WordPart) bool { _, ok := p.(*syntax.ProcSubst); return ok }) {
			// A=<(…): as a<(…), read apart by a careless eye.
			r.markUnknown("a process substitution inside a word (" + clip(r.raw(as.Value), 60) + ")")
		}
		v, err := r.word(as.Value)
		if err != nil {
			return w, err
		}
		w.text += v.text
		// A={ is no group: the brace is a brace expansion's, as in A={a,b}.
		v.dynamic = v.dynamic || strings.Contains(v.text, "{")
		w.dynamic = w.dynamic || v.dynamic
		if as.Append && v.dynamic {
			// A+=$X: the old reader took it for a program that is an
			// expansion; kept as strict.
			r.markUnknown("an append to " + clip(w.text, 60) + " holds expansions")
		}
		w.glob = v.glob
	}
	return w, nil
}

// arith reads arithmetic: complex, and when it holds expansions not
// checkable at all (bash evaluates a variable's value as arithmetic too,
// and a[$(…)] in it runs a command).
//
// Its text is also checked against the deny list as a command line of
// its own, as far as it reads as one (as the old reader read $((…))).
func (r *reader) arith(n syntax.Node) error {
	r.ln.markComplex("arithmetic")
	if expands(n) {
		r.markUnknown("arithmetic holds expansions (" + clip(r.raw(n), 60) + ")")
	}
	r.hiddenSubst()
	var exprs []syntax.ArithmExpr
	switch n := n.(type) {
	case *syntax.ArithmExp:
		exprs = append(exprs, n.X)
	case *syntax.ArithmCmd:
		exprs = append(exprs, n.X)
	case *syntax.CStyleLoop:
		exprs = append(exprs, n.Init, n.Cond, n.Post)
	case syntax.ArithmExpr:
		exprs = append(exprs, n)
	}
	for _, x := range exprs {
		if x != nil {
			r.bestEffort(r.raw(x))
		}
	}
	return r.inside(n)
}

// hiddenSubst: bash's arithmetic evaluates strings and variables'
// values as expressions, and a[$(…)] in one runs the command:
// (( 'a[$(git push)]' )), [[ $x -eq 1 ]] with x set to such a string,
// let, declare -i. When the text read has an arithmetic context and both
// a [ and a $(…) or `…` anywhere, the line cannot be checked.
func (r *reader) hiddenSubst() {
	if subscript.MatchString(r.src) && hiddenCmd.MatchString(r.src) {
		r.markUnknown("arithmetic may run a command written into a string (a[$(…)])")
	}
}

// subscript is a name's [ (a[…]); hiddenCmd is a $(…) (not $((…))) or
// a backquote.
var subscript = regexp.MustCompile(`[A-Za-z0-9_]\[`)

// hiddenCmd is a $(…) (not $((…))) or a backquote.
var hiddenCmd = regexp.MustCompile("\\$\\([^(]|`")

// inside reads the substitutions anywhere inside n (an arithmetic
// expression, an array, a test): each is a command of its own.
func (r *reader) inside(n syntax.Node) error {
	var err error
	syntax.Walk(n, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			err = r.subst(n.Stmts, n.Last, "command substitution")
			return false
		case *syntax.ProcSubst:
			err = r.subst(n.Stmts, n.Last, "process substitution")
			return false
		case *syntax.ExtGlob:
			err = r.extGlob(n)
			return false
		}
		return true
	})
	return err
}

// extGlob reads @(…), !(…): the parser keeps the pattern as text, but
// bash expands $(…) in it. It is read as the old reader read it, as a
// command line of its own; one with expansions is not checkable.
func (r *reader) extGlob(g *syntax.ExtGlob) error {
	r.ln.markComplex("extended glob")
	if strings.ContainsAny(g.Pattern.Value, "$`") {
		r.markUnknown("an extended glob holds expansions (" + clip(r.raw(g), 60) + ")")
	}
	return parseInto(r.ln, g.Pattern.Value, r.depth+1, true)
}

// subst reads the commands of a substitution: they run nested.
func (r *reader) subst(ss []*syntax.Stmt, last []syntax.Comment, why string) error {
	r.ln.markComplex(why)
	if r.depth+1 > maxDepth {
		return errTooDeep
	}
	inner := &reader{src: r.src, ln: r.ln, depth: r.depth + 1}
	if err := inner.stmts(true, ss); err != nil {
		return err
	}
	inner.comments(last)
	return nil
}

// word is w after quote removal, with what it expands noted.
func (r *reader) word(w *syntax.Word) (word, error) {
	var out word
	if w == nil {
		return out, nil
	}
	var b strings.Builder
	for i, p := range w.Parts {
		if _, ok := p.(*syntax.ProcSubst); ok && i > 0 {
			// a<(…): a file name made of a pipe's, read apart by a
			// careless eye (the old reader did).
			r.markUnknown("a process substitution inside a word (" + clip(r.raw(w), 60) + ")")
		}
		if err := r.part(p, i == 0, false, &out, &b); err != nil {
			return out, err
		}
	}
	out.text = b.String()
	if out.text == "{" && len(w.Parts) == 1 {
		out.dynamic = false // not a brace expansion
	}
	return out, nil
}

func (r *reader) part(p syntax.WordPart, first, quoted bool, out *word, b *strings.Builder) error {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			if bareDollar(p.Value) {
				// "$''", "a$": a $ that starts no expansion inside double
				// quotes reads as $'…' or $"…" to a careless eye (the old
				// reader took it so): not trusted.
				out.dynamic = true
			}
			unescape(p.Value, "$`\"\\\n", b)
			return nil
		}
		if first && strings.HasPrefix(p.Value, "~") {
			out.tilde = true
		}
		unescapeBare(p.Value, out, b)
	case *syntax.SglQuoted:
		if p.Dollar {
			// $'…' decodes escapes (\x67 is g): its value is not read here.
			out.dynamic = true
			b.WriteString(r.raw(p))
			return nil
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		if p.Dollar {
			out.dynamic = true // $"…" is translated
		}
		for _, q := range p.Parts {
			if err := r.part(q, false, true, out, b); err != nil {
				return err
			}
		}

	case *syntax.ArithmExp:
		if err := r.arith(p); err != nil {
			return err
		}
		out.dynamic = true
		b.WriteString(r.raw(p))
	case *syntax.ParamExp:
		if expands(p) {
			// ${X:-$Y}, ${X#$(…)}: what it makes is not known here.
			r.markUnknown("a parameter expansion holds expansions (" + clip(r.raw(p), 60) + ")")
		} else if raw := r.raw(p); len(raw) > 2 && strings.ContainsAny(raw[2:], "$`") {
			r.markUnknown("a parameter expansion holds a $ or ` (" + clip(raw, 60) + ")")
		}
		// ${x:-$(…)}: what runs inside is read too.
		if err := r.inside(p); err != nil {
			return err
		}
		out.dynamic = true
		b.WriteString(r.raw(p))
	case *syntax.CmdSubst:
		if err := r.subst(p.Stmts, p.Last, "command substitution"); err != nil {
			return err
		}
		out.dynamic = true
		b.WriteString(r.raw(p))
	case *syntax.ProcSubst:
		if err := r.subst(p.Stmts, p.Last, "process substitution"); err != nil {
			return err
		}
		out.dynamic = true
		b.WriteString(r.raw(p))
	case *syntax.ExtGlob:
		if err := r.extGlob(p); err != nil {
			return err
		}
		out.dynamic, out.glob = true, true
		b.WriteString(r.raw(p))
	default:
		return fmt.Errorf("a word part Fetch does not read (%T)", p)
	}
	return nil
}

// markUnknown: the line cannot be checked against the deny list (and is
// complex).
func (r *reader) markUnknown(why string) {
	r.ln.markComplex(why)
	if r.ln.unknown == "" {
		r.ln.unknown = why
	}
}

// expands: n holds an expansion below itself.
func expands(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			found = found || m != n
		case *syntax.ExtGlob:
			found = found || strings.ContainsAny(m.Pattern.Value, "$`")
		}
		return !found
	})
	return found
}

// unescapeBare removes the backslashes of an unquoted literal and notes
// its unquoted glob and brace characters.
func unescapeBare(s string, out *word, b *strings.Builder) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
		case '*', '?', '[':
			out.glob = true
		case '{':
			// Brace expansion can make any word ({.,.}. is ..).
			out.dynamic = true
		}
		b.WriteByte(c)
	}
}

// bareDollar: s holds a $ no backslash escapes.
func bareDollar(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			return true
		}
	}
	return false
}

// unescape removes the backslashes before the characters of special
// (inside double quotes: $, `, ", \ and newline; a backslash and a
// newline are removed together).
func unescape(s, special string, b *strings.Builder) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(special, s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
}

func isRedirOp(op string) bool {
	switch op {
	case "<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<", "<<-", "<<<":
		return true
	}
	return false
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

// Shells whose -c argument is a command line of its own.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "fish": true, "busybox": false}

// unwrapInner parses (with parse) what a command runs as text:
// sh -c '…', eval …, find … -exec … ;, also behind a wrapper (sudo sh -c).
// The deny checks look at every suffix of a wrapper's words too.
func unwrapInner(ln *line, c simple, depth int, parse func(ln *line, s string, depth int, nested bool) error) error {
	if len(c.args) == 0 {
		return nil
	}
	prog := base(c.args[0].text)
	switch {
	case wrappers[prog]:
		// sudo bash -c '…', timeout 5 sh -c '…', env eval …: what the
		// wrapped command runs is read as if it ran alone.
		for i := 1; i < len(c.args); i++ {
			if p := base(c.args[i].text); !c.args[i].dynamic && (shells[p] || p == "eval" || p == "find") {
				return unwrapInner(ln, simple{args: c.args[i:], nested: c.nested}, depth, parse)
			}
		}
	case shells[prog]:
		for i := 1; i < len(c.args); i++ {
			a := c.args[i].text
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
				if i+1 < len(c.args) {
					ln.markComplex(prog + " -c")
					if c.args[i+1].dynamic {
						// sh -c "$X …": the script is not known; what can
						// be read of it is checked against the deny list.
						if ln.unknown == "" {
							ln.unknown = "the script " + prog + " -c runs holds expansions (" + clip(c.args[i+1].text, 60) + ")"
						}
						_ = parse(ln, c.args[i+1].text, depth+1, true)
						return nil
					}
					return parse(ln, c.args[i+1].text, depth+1, true)
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
		return parse(ln, strings.Join(parts, " "), depth+1, true)
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
