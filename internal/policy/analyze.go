package policy

import (
	"path"
	"slices"
	"strings"
)

// class is how much a simple command changes, in the order the autonomy
// levels allow them.
type class int

const (
	// classRead changes nothing.
	classRead class = iota
	// classEdit changes files inside the worktree only.
	classEdit
	// classBuild is one of the workspace's test and build commands.
	classBuild
	// classOther is anything else.
	classOther
)

// analysis reads a command line for one task.
type analysis struct {
	ws Task
	// dirs are the directories a command may run in: the line's cd's add
	// to them (never replace: a cd that failed leaves the old one); ""
	// is a directory the parser cannot know.
	dirs []string
	// branch is the branch checked out, "" when it may be any.
	branch string
	hits   []Hit
	// unknown says why a command cannot be checked at all.
	unknown string
}

// cmdResult is what one simple command is.
type cmdResult struct {
	c     simple
	class class
	// why says what makes the command classOther, for the owner.
	why string
}

// Wrappers run the command in their arguments. The deny list is checked
// on every suffix of their words, so options the policy does not know
// (nice -n 10 git push) cannot hide the command.
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "time": true, "nice": true,
	"ionice": true, "stdbuf": true, "timeout": true, "setsid": true, "exec": true,
	"command": true, "builtin": true, "xargs": true, "watch": true, "unbuffer": true,
	"chronic": true, "flock": true, "strace": true, "ltrace": true, "busybox": true,
	"toybox": true, "npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true,
	"poetry": true, "uv": true, "bundle": true, "npm": true, "pnpm": true, "yarn": true,
	"parallel": true, "script": true, "runuser": true, "su": true, "chroot": true,
}

func (a *analysis) run(ln *line) []cmdResult {
	out := make([]cmdResult, 0, len(ln.cmds))
	for _, c := range ln.cmds {
		out = append(out, a.command(c))
	}
	return out
}

func (a *analysis) hit(item DenyItem, what string) {
	a.hits = append(a.hits, Hit{Item: item, What: clip(what, 120)})
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func (a *analysis) command(c simple) cmdResult {
	r := cmdResult{c: c, class: classRead}
	raise := func(cl class, why string) {
		if cl > r.class {
			r.class, r.why = cl, why
		}
	}
	// Credentials, in any word, assignment or redirection.
	for _, w := range c.args {
		if credential(w.text) || credential(argValue(w.text)) {
			a.hit(DenyCredentials, w.text)
		}
	}
	for _, w := range c.env {
		_, v, _ := strings.Cut(w.text, "=")
		if credential(v) {
			a.hit(DenyCredentials, w.text)
		}
	}
	for _, rd := range c.redirs {
		t := rd.target
		if credential(t.text) {
			a.hit(DenyCredentials, rd.op+" "+t.text)
		}
		if strings.HasPrefix(path.Clean("/"+t.text), "/dev/tcp/") || strings.HasPrefix(path.Clean("/"+t.text), "/dev/udp/") {
			a.hit(DenyRemotes, rd.op+" "+t.text) // bash opens a socket
		}
		switch rd.op {
		case "<", "<<<", "<<", "<<-":
		case "<&", ">&":
			if isDigits(t.text) || t.text == "-" {
				continue
			}
			fallthrough
		default:
			if harmless[t.text] && !t.dynamic {
				continue
			}
			if a.where(t) == inWorktree {
				raise(classEdit, "")
			} else {
				raise(classOther, "it writes "+t.text)
			}
		}
	}
	if len(c.env) > 0 {
		raise(classOther, "it sets environment variables")
	}
	if c.nested {
		raise(classOther, "it runs inside another command")
	}
	if len(c.args) == 0 {
		return r
	}
	if c.args[0].dynamic {
		if a.unknown == "" {
			a.unknown = "the program to run is an expansion (" + c.args[0].text + ")"
		}
		raise(classOther, "")
		return r
	}
	prog := base(c.args[0].text)
	a.deny(c.args)
	if wrappers[prog] {
		for i := 1; i < len(c.args); i++ {
			if !c.args[i].dynamic {
				a.deny(c.args[i:])
			}
		}
	}
	if prog == "cd" || prog == "pushd" || prog == "popd" {
		a.cd(c.args)
		return r
	}
	cl, why := a.classify(c.args)
	raise(cl, why)
	return r
}

// cd adds the directory a cd may leave the line in.
func (a *analysis) cd(args []word) {
	var target *word
	for i := 1; i < len(args); i++ {
		if !strings.HasPrefix(args[i].text, "-") || args[i].text == "-" {
			target = &args[i]
			break
		}
	}
	if base(args[0].text) == "popd" || target == nil || target.text == "-" || target.dynamic || target.glob {
		a.dirs = append(a.dirs, "")
		return
	}
	t := *target
	if t.tilde {
		if a.ws.Home == "" || !(t.text == "~" || strings.HasPrefix(t.text, "~/")) {
			a.dirs = append(a.dirs, "")
			return
		}
		t.text = a.ws.Home + t.text[1:]
	}
	if strings.HasPrefix(t.text, "/") {
		a.dirs = append(a.dirs, cleanPath(t.text))
		return
	}
	n := len(a.dirs)
	for _, d := range a.dirs[:n] {
		if d == "" {
			continue
		}
		a.dirs = append(a.dirs, cleanPath(d+"/"+t.text))
	}
}

// deny checks one command's words against the deny list.
func (a *analysis) deny(args []word) {
	prog := base(args[0].text)
	what := joinWords(args)
	switch prog {
	case "git":
		a.git(args)
	case "gh", "glab", "hub":
		a.hit(DenyRemotes, what)
	case "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "rsh", "rlogin", "mosh", "ssh-copy-id":
		a.hit(DenyRemotes, what)
	case "rsync":
		for _, w := range operands(args[1:]) {
			if strings.Contains(w.text, ":") {
				a.hit(DenyRemotes, what)
				break
			}
		}
	case "curl":
		if sendsData(args[1:], []string{"-d", "-F", "-T", "--json", "--upload-file", "--form", "--data"}, []string{"-X", "--request"}) {
			a.hit(DenyRemotes, what)
		}
	case "wget":
		if sendsData(args[1:], []string{"--post-data", "--post-file", "--body-data", "--body-file"}, []string{"--method"}) {
			a.hit(DenyRemotes, what)
		}
	case "rm", "rmdir", "unlink", "shred", "srm":
		ops := operands(args[1:])
		if len(ops) == 0 && slices.ContainsFunc(args[1:], func(w word) bool { return w.dynamic }) {
			a.hit(DenyDelete, what)
		}
		for _, w := range ops {
			if p := a.where(w); p != inWorktree && p != inGit {
				a.hit(DenyDelete, what)
				break
			}
		}
	case "mv":
		ops := operands(args[1:])
		targetDir := slices.ContainsFunc(args[1:], func(w word) bool {
			return w.text == "-t" || strings.HasPrefix(w.text, "--target-directory")
		})
		if !targetDir && len(ops) > 0 {
			ops = ops[:len(ops)-1]
		}
		for _, w := range ops {
			if p := a.where(w); p != inWorktree && p != inGit {
				a.hit(DenyDelete, what)
				break
			}
		}
	case "find":
		if !slices.ContainsFunc(args, func(w word) bool { return w.text == "-delete" }) {
			return
		}
		starts := []word{{text: "."}}
		for i := 1; i < len(args); i++ {
			t := args[i].text
			if strings.HasPrefix(t, "-") || t == "(" || t == "!" {
				break
			}
			if i == 1 {
				starts = nil
			}
			starts = append(starts, args[i])
		}
		for _, w := range starts {
			if p := a.where(w); p != inWorktree && p != inGit {
				a.hit(DenyDelete, what)
				break
			}
		}
	}
}

// operands are the words that are not options (everything after --).
func operands(args []word) []word {
	var out []word
	dashdash := false
	for _, w := range args {
		switch {
		case dashdash:
			out = append(out, w)
		case w.text == "--":
			dashdash = true
		case strings.HasPrefix(w.text, "-") && w.text != "-":
		default:
			out = append(out, w)
		}
	}
	return out
}

// sendsData: an option of data (or its --opt=value or -dvalue form), or a
// method option whose value is not GET or HEAD.
func sendsData(args []word, data, method []string) bool {
	for i, w := range args {
		t := w.text
		for _, d := range data {
			if t == d || strings.HasPrefix(t, d+"=") || strings.HasPrefix(d, "--") && strings.HasPrefix(t, d) ||
				len(d) == 2 && strings.HasPrefix(t, d) {
				return true
			}
		}
		for _, m := range method {
			var v string
			switch {
			case t == m && i+1 < len(args):
				v = args[i+1].text
			case strings.HasPrefix(t, m+"="):
				v = t[len(m)+1:]
			case len(m) == 2 && strings.HasPrefix(t, m) && len(t) > 2:
				v = t[2:]
			default:
				continue
			}
			if v = strings.ToUpper(v); v != "GET" && v != "HEAD" {
				return true
			}
		}
	}
	return false
}

func cleanPath(p string) string { return path.Clean(p) }
