package checks

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Limits of what the owner sets.
const (
	// MaxCommands bounds the commands of a workspace.
	MaxCommands = 5
	// maxCommandLen bounds one command line, in bytes.
	maxCommandLen = 500
)

// ErrCommand is a command line that is not one simple command of literal
// words.
var ErrCommand = errors.New("not a command Fetch runs as given")

// Parse reads a command line into its argv: one simple command whose
// words are literal (quotes and backslashes allowed), without
// expansions ($VAR, $(…), globs are kept as typed), pipes, lists,
// redirections, assignments or background. The error says what to write
// instead.
func Parse(line string) ([]string, error) {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return nil, fmt.Errorf("an empty command: %w", ErrCommand)
	case len(line) > maxCommandLen:
		return nil, fmt.Errorf("a command longer than %d bytes: %w", maxCommandLen, ErrCommand)
	case !utf8.ValidString(line) || strings.ContainsAny(line, "\x00\r\n"):
		return nil, fmt.Errorf("a command of one line of text: %w", ErrCommand)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("%q does not parse (%s): %w", line, shortParseErr(err), ErrCommand)
	}
	pipeline := fmt.Errorf("%q is more than one plain command; write sh -c '…' to run a pipeline or list in the kennel: %w", line, ErrCommand)
	if len(f.Stmts) != 1 {
		return nil, pipeline
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, pipeline
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil, pipeline
	}
	if len(call.Assigns) > 0 {
		return nil, fmt.Errorf("%q sets variables; write env NAME=VALUE COMMAND: %w", line, ErrCommand)
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		if !literal(w) {
			return nil, fmt.Errorf("%q has an expansion ($…, `…`, ~, globs are not expanded here); write sh -c '…' to have the kennel's shell expand it: %w", line, ErrCommand)
		}
		// Fields removes the quotes and backslashes; with no
		// environment and no directory it expands nothing else.
		fs, err := expand.Fields(nil, w)
		if err != nil || len(fs) != 1 {
			return nil, fmt.Errorf("%q: a word does not read as one argument: %w", line, ErrCommand)
		}
		argv = append(argv, fs[0])
	}
	return argv, nil
}

// literal tells whether w is made of literal text and quotes only.
func literal(w *syntax.Word) bool {
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

func shortParseErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// Quote writes argv back as one line the owner reads (and Parse reads
// again): words with anything but safe characters are single-quoted.
func Quote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}
