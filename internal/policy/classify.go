package policy

import (
	"slices"
	"strings"
)

// readOnly are programs that only read, with the options that make them
// do more (write a file, run a program).
var readOnly = map[string][]string{
	"cat": nil, "head": nil, "tail": nil, "wc": nil, "ls": nil, "tree": nil, "pwd": nil,
	"echo": nil, "printf": nil, "true": nil, "false": nil, "grep": nil, "egrep": nil,
	"fgrep": nil, "file": nil, "stat": nil, "du": nil, "df": nil, "diff": nil, "cmp": nil,
	"cut": nil, "tr": nil, "nl": nil, "basename": nil, "dirname": nil, "realpath": nil,
	"readlink": nil, "which": nil, "whoami": nil, "id": nil, "uname": nil, "column": nil,
	"comm": nil, "od": nil, "hexdump": nil, "md5sum": nil, "sha1sum": nil, "sha256sum": nil,
	"jq": nil, "test": nil, "[": nil, "sleep": nil,
	"rg":   {"--pre", "--pre-glob"},
	"ag":   nil,
	"sort": {"-o", "--output", "--compress-program"},
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
}

// gitRead are git subcommands that only read (with the options that
// write or run something).
var gitRead = map[string][]string{
	"status": nil, "log": {"--output", "--ext-diff"}, "diff": {"--output", "--ext-diff"},
	"show": {"--output", "--ext-diff"}, "rev-parse": nil, "ls-files": nil, "ls-tree": nil,
	"blame": nil, "grep": {"-O", "--open-files-in-pager"}, "describe": nil, "shortlog": nil,
	"cat-file": nil, "merge-base": nil, "rev-list": nil, "help": nil, "version": nil,
}

// gitEdit are git subcommands that change only the worktree and the
// task's branch.
var gitEdit = map[string]bool{"add": true, "commit": true, "mv": true, "rm": true, "restore": true}

// editors are programs that create, copy, move or remove files: an edit
// when every path they name is in the worktree.
var editors = map[string]bool{"mkdir": true, "touch": true, "cp": true, "mv": true, "rm": true, "rmdir": true}

// runsPrograms are options of test and build tools that run a program of
// the caller's choice.
var runsPrograms = []string{"-exec", "-toolexec", "--exec", "-overlay", "--rcfile", "--init-file"}

func vetoed(args []word, opts []string) bool {
	return slices.ContainsFunc(args, func(w word) bool {
		for _, o := range opts {
			if w.text == o || strings.HasPrefix(w.text, o+"=") || len(o) == 2 && strings.HasPrefix(w.text, o) {
				return true
			}
		}
		return false
	})
}

// classify says what a command is (its deny-list hits are checked apart).
func (a *analysis) classify(args []word) (class, string) {
	prog := base(args[0].text)
	rest := args[1:]
	if cl, ok := a.buildCommand(args); ok {
		return cl, ""
	}
	if args[0].text != prog && a.where(args[0]) != outside {
		// /usr/bin/cat is cat; a program of the worktree is not.
		return classOther, "it runs a program of the worktree"
	}
	if opts, ok := readOnly[prog]; ok {
		if vetoed(rest, opts) {
			return classOther, "an option of " + prog + " writes or runs a program"
		}
		return classRead, ""
	}
	if editors[prog] {
		if a.allInWorktree(rest, true) {
			return classEdit, ""
		}
		return classOther, "it changes files outside the worktree"
	}
	if prog == "git" {
		return a.classifyGit(args)
	}
	return classOther, ""
}

func (a *analysis) classifyGit(args []word) (class, string) {
	g := parseGit(args)
	if g.elsewhere || len(g.config) > 0 || g.sub == "" {
		return classOther, ""
	}
	if opts, ok := gitRead[g.sub]; ok {
		if vetoed(g.rest, opts) {
			return classOther, "an option of git " + g.sub + " writes a file"
		}
		return classRead, ""
	}
	ops := operands(g.rest)
	switch g.sub {
	case "branch", "tag":
		for _, w := range g.rest {
			if !slices.Contains([]string{"-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--show-current", "--no-color"}, w.text) {
				return classOther, ""
			}
		}
		return classRead, ""
	case "remote":
		if len(ops) == 0 || ops[0].text == "get-url" {
			return classRead, ""
		}
	case "stash":
		if len(ops) > 0 && (ops[0].text == "list" || ops[0].text == "show") {
			return classRead, ""
		}
	case "config":
		if hasOpt(g.rest, "--get", "--get-all", "--list", "-l") {
			return classRead, ""
		}
	}
	if gitEdit[g.sub] {
		if g.sub == "commit" && hasOpt(g.rest, "--amend") {
			return classOther, "it rewrites a commit"
		}
		if a.allInWorktree(g.rest, g.sub != "commit") {
			return classEdit, ""
		}
		return classOther, "it names paths outside the worktree"
	}
	return classOther, ""
}

// allInWorktree: every path the arguments name is in the worktree (not
// under .git); operands count as paths when operandsArePaths.
func (a *analysis) allInWorktree(args []word, operandsArePaths bool) bool {
	ops := operands(args)
	for _, w := range args {
		isOp := slices.ContainsFunc(ops, func(o word) bool { return o == w })
		v := argValue(w.text)
		if w.dynamic {
			return false
		}
		if (isOp && operandsArePaths) || pathish(v) {
			if harmless[v] {
				continue
			}
			pw := w
			pw.text = v
			pw.tilde = strings.HasPrefix(v, "~")
			if a.where(pw) != inWorktree {
				return false
			}
		}
	}
	return true
}

// buildCommand: args start with one of the workspace's test and build
// commands, run nothing of the caller's choice and name no path outside
// the worktree.
func (a *analysis) buildCommand(args []word) (class, bool) {
	for _, c := range a.ws.Commands {
		if !prefixWords(args, strings.Fields(c)) {
			continue
		}
		if vetoed(args, runsPrograms) {
			return classOther, true
		}
		if !a.allInWorktree(args[len(strings.Fields(c)):], false) {
			return classOther, true
		}
		return classBuild, true
	}
	return 0, false
}

// prefixWords: args begin with the words of prefix, word for word (npm
// test is a prefix of npm test --watch, not of npm tests), and those words
// are plain literals.
func prefixWords(args []word, prefix []string) bool {
	if len(prefix) == 0 || len(args) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if args[i].dynamic || args[i].glob || args[i].tilde || args[i].text != p {
			return false
		}
	}
	return true
}
