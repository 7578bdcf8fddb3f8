package policy

import (
	"slices"
	"strings"
)

// gitArgs is a git command line with its global options read.
type gitArgs struct {
	sub  string
	rest []word
	// elsewhere: -C, --git-dir or --work-tree point git somewhere the
	// branch is not known.
	elsewhere bool
	// config are the -c key=value settings.
	config []string
}

func parseGit(args []word) gitArgs {
	var g gitArgs
	i := 1
	for ; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-C" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" || t == "--exec-path" || t == "--super-prefix":
			g.elsewhere = g.elsewhere || t != "--namespace"
			i++
		case t == "-c":
			if i+1 < len(args) {
				g.config = append(g.config, args[i+1].text)
			}
			i++
		case strings.HasPrefix(t, "-C") || strings.HasPrefix(t, "--git-dir=") || strings.HasPrefix(t, "--work-tree="):
			g.elsewhere = true
		case strings.HasPrefix(t, "-c"):
			g.config = append(g.config, t[2:])
		case strings.HasPrefix(t, "-"):
		default:
			g.sub = t
			g.rest = args[i+1:]
			if args[i].dynamic {
				g.sub = ""
			}
			return g
		}
	}
	return g
}

// remoteConfig are git settings that reach remotes or run commands
// (an alias can hide a push).
var remoteConfig = []string{"remote.", "url.", "credential.", "alias.", "core.sshcommand", "http.", "pushurl"}

func sensitiveConfig(kv string) bool {
	k := strings.ToLower(kv)
	for _, p := range remoteConfig {
		if strings.HasPrefix(k, p) || strings.Contains(k, "."+p) {
			return true
		}
	}
	return false
}

func hasOpt(ws []word, opts ...string) bool {
	return slices.ContainsFunc(ws, func(w word) bool {
		for _, o := range opts {
			if w.text == o || strings.HasPrefix(o, "--") && strings.HasPrefix(w.text, o+"=") {
				return true
			}
		}
		return false
	})
}

// hasShort: a short option letter, alone or in a cluster (-fD).
func hasShort(ws []word, letters string) bool {
	for _, w := range ws {
		t := w.text
		if len(t) >= 2 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:], letters) {
			return true
		}
	}
	return false
}

func (a *analysis) git(args []word) {
	g := parseGit(args)
	what := joinWords(args)
	for _, kv := range g.config {
		if sensitiveConfig(kv) {
			a.hit(DenyRemotes, what)
		}
	}
	base := a.ws.BaseBranch
	namesBase := func(w word) bool {
		return w.dynamic || base == "" || w.text == base || w.text == "refs/heads/"+base || w.text == "heads/"+base
	}
	mayBeBase := g.elsewhere || base == "" || a.branch == "" || a.branch == base
	ops := operands(g.rest)
	switch g.sub {
	case "push", "fetch", "pull", "clone", "ls-remote", "request-pull", "send-email", "svn", "p4", "imap-send":
		a.hit(DenyRemotes, what)
	case "archive":
		if hasOpt(g.rest, "--remote") {
			a.hit(DenyRemotes, what)
		}
	case "submodule":
		if len(ops) > 0 && ops[0].text != "status" && ops[0].text != "summary" {
			a.hit(DenyRemotes, what)
		}
	case "lfs":
		if len(ops) > 0 && slices.Contains([]string{"push", "pull", "fetch", "clone", "mirror"}, ops[0].text) {
			a.hit(DenyRemotes, what)
		}
	case "remote":
		if len(ops) > 0 && ops[0].text != "get-url" && !(ops[0].text == "show" && hasOpt(g.rest, "-n")) {
			a.hit(DenyRemotes, what)
		}
	case "config":
		reading := hasOpt(g.rest, "--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin") ||
			len(ops) > 0 && (ops[0].text == "get" || ops[0].text == "list") || len(ops) == 1
		if !reading && slices.ContainsFunc(ops, func(w word) bool { return sensitiveConfig(w.text) || w.dynamic }) {
			a.hit(DenyRemotes, what)
		}
	case "reset":
		if hasOpt(g.rest, "--hard") && mayBeBase {
			a.hit(DenyRewrite, what)
		}
	case "rebase":
		if hasOpt(g.rest, "--abort", "--quit", "--show-current-patch") {
			break
		}
		if mayBeBase || len(ops) >= 2 && namesBase(ops[1]) {
			a.hit(DenyRewrite, what)
		}
	case "commit":
		if hasOpt(g.rest, "--amend") && mayBeBase {
			a.hit(DenyRewrite, what)
		}
	case "filter-branch":
		if mayBeBase || hasOpt(g.rest, "--all") || slices.ContainsFunc(g.rest, namesBase) {
			a.hit(DenyRewrite, what)
		}
	case "filter-repo":
		a.hit(DenyRewrite, what)
	case "branch":
		if (hasOpt(g.rest, "--force", "--delete", "--move", "--copy") || hasShort(g.rest, "fdDmMC")) && slices.ContainsFunc(ops, namesBase) {
			a.hit(DenyRewrite, what)
		}
	case "update-ref":
		if slices.ContainsFunc(ops, namesBase) {
			a.hit(DenyRewrite, what)
		}
	case "checkout", "switch":
		a.checkout(g, what)
	case "":
		// No subcommand (git --version), or one that is an expansion:
		// git $X may be git push.
		if slices.ContainsFunc(args[1:], func(w word) bool { return w.dynamic }) && a.unknown == "" {
			a.unknown = "git's subcommand is an expansion"
		}
	}
}

// checkout follows the branch a checkout or switch leaves the worktree
// on, and denies forcing the base branch to a commit (-B, -C).
func (a *analysis) checkout(g gitArgs, what string) {
	base := a.ws.BaseBranch
	for i, w := range g.rest {
		switch w.text {
		case "-B", "-C", "--force-create":
			if i+1 < len(g.rest) && (g.rest[i+1].text == base || base == "" || g.rest[i+1].dynamic) {
				a.hit(DenyRewrite, what)
			}
			fallthrough
		case "-b", "-c", "--create", "--orphan":
			if i+1 < len(g.rest) && !g.rest[i+1].dynamic {
				a.branch = g.rest[i+1].text
			} else {
				a.branch = ""
			}
			return
		case "--":
			return // paths only
		}
	}
	ops := operands(g.rest)
	if len(ops) == 0 {
		return
	}
	t := ops[0].text
	switch {
	case ops[0].dynamic:
		a.branch = ""
	case g.sub == "checkout" && (t == "." || strings.HasPrefix(t, "./")):
	case t == a.ws.Branch && t != "":
		a.branch = t
	case t == base:
		a.branch = base
	default:
		a.branch = ""
	}
}
