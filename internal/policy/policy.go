package policy

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/store"
)

// maxClass is what each level allows without asking.
func maxClass(level instincts.Autonomy) class {
	switch level {
	case instincts.Autonomous:
		return classOther
	case instincts.Cautious:
		return classBuild
	default:
		return classRead
	}
}

// normal is the level a conversation's stored value means: "" is
// cautious (as /autonomy shows it); an unknown word is supervised.
func normal(level instincts.Autonomy) instincts.Autonomy {
	if level == "" {
		return instincts.Cautious
	}
	if l, ok := instincts.ParseAutonomy(string(level)); ok {
		return l
	}
	return instincts.Supervised
}

// Decide answers one permission request of task t at the given level,
// with the rules remembered for t's workspace (rules of another workspace
// or another task are ignored). It does no I/O.
func Decide(req Request, t Task, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	level = normal(level)
	var mine []store.PolicyRule
	for _, r := range rules {
		if r.Workspace == t.Workspace && (r.TaskID == "" || r.TaskID == t.ID) {
			mine = append(mine, r)
		}
	}
	d := decide(req, t, level, mine)
	if d.Verdict == Ask && d.Remember != nil {
		if err := CheckRule(d.Remember.Tool, d.Remember.Pattern); err != nil {
			d.Remember = nil
		}
	}
	return d
}

func decide(req Request, t Task, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	switch req.Kind {
	case Shell:
		return decideShell(req, t, level, rules)
	case Edit, Delete, Read:
		return decidePaths(req, t, level, rules)
	case Fetch:
		return decideFetch(req, level, rules)
	case Internal:
		return Decision{Verdict: Allow, By: ByLevel, Reason: fmt.Sprintf("%s is the CLI's own bookkeeping and changes nothing", req.Tool)}
	default:
		if r, ok := findRule(rules, Other, func(p string) bool { return p == req.Tool }); ok {
			return byRules(r)
		}
		d := Decision{Verdict: Ask, By: ByUnknown,
			Reason: fmt.Sprintf("Fetch does not know what the tool %q does, so it cannot check it against the deny list", req.Tool)}
		if req.Tool != "" {
			d.Remember = &Suggestion{Tool: Other, Pattern: req.Tool}
		}
		return d
	}
}

// onDenyList: Deny when autonomous (nobody is asked), Ask otherwise (the
// owner is watching and may allow it once; it is never remembered).
func onDenyList(level instincts.Autonomy, hits []Hit) Decision {
	h := hits[0]
	if level == instincts.Autonomous {
		return Decision{Verdict: Deny, By: ByDenyList, Hits: hits,
			Reason: fmt.Sprintf("denied: %s (`%s`) is on the deny list (/policy)", h.Item, h.What)}
	}
	return Decision{Verdict: Ask, By: ByDenyList, Hits: hits,
		Reason: fmt.Sprintf("on the deny list: %s (`%s`); allow it only if you mean it", h.Item, h.What)}
}

func byLevel(level instincts.Autonomy) Decision {
	var why string
	switch level {
	case instincts.Autonomous:
		why = "autonomous: it runs inside the kennel and is not on the deny list"
	case instincts.Cautious:
		why = "cautious: reads, edits in the worktree and the workspace's test and build commands run without asking"
	default:
		why = "supervised: it changes nothing"
	}
	return Decision{Verdict: Allow, By: ByLevel, Reason: why}
}

func byRules(rs ...store.PolicyRule) Decision {
	var parts []string
	for _, r := range rs {
		parts = append(parts, RuleText(r))
	}
	return Decision{Verdict: Allow, By: ByRule, Rules: rs, Reason: "allowed by " + strings.Join(parts, "; ")}
}

// RuleText is a rule as the chat shows it: rule #3: shell `npm test` in
// workspace api (for task t1).
func RuleText(r store.PolicyRule) string {
	s := fmt.Sprintf("rule #%d: %s `%s` in workspace %s", r.ID, r.Tool, r.Pattern, r.Workspace)
	if r.TaskID != "" {
		s += " for task " + r.TaskID
	}
	return s
}

func findRule(rules []store.PolicyRule, k Kind, match func(pattern string) bool) (store.PolicyRule, bool) {
	for _, r := range rules {
		if Kind(r.Tool) == k && match(r.Pattern) {
			return r, true
		}
	}
	return store.PolicyRule{}, false
}

func decideShell(req Request, t Task, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	ln, err := parseShell(req.Command)
	return judgeLine(ln, err, req, t, level, rules)
}

// judgeLine decides on a command line read by parseShell (ln, err).
func judgeLine(ln *line, err error, req Request, t Task, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	if err != nil || strings.TrimSpace(req.Command) == "" {
		why := "the command is empty"
		if err != nil {
			why = fmt.Sprintf("Fetch cannot parse the command (%v)", err)
		}
		if level == instincts.Autonomous {
			return Decision{Verdict: Deny, By: ByUnknown, Reason: "denied: " + why}
		}
		return Decision{Verdict: Ask, By: ByUnknown, Reason: why}
	}
	a := &analysis{ws: t, dirs: []string{dirOr(t, req.Dir)}, branch: t.Branch}
	results := a.run(ln)
	if a.unknown == "" {
		a.unknown = ln.unknown
	}
	if len(a.hits) > 0 {
		return onDenyList(level, a.hits)
	}
	if a.unknown != "" {
		return Decision{Verdict: Ask, By: ByUnknown, Reason: "Fetch cannot check the command against the deny list: " + a.unknown}
	}
	if level == instincts.Autonomous {
		return byLevel(level)
	}
	if ln.complex != "" {
		return Decision{Verdict: Ask, By: ByLevel,
			Reason: fmt.Sprintf("%s: the command line has a %s, so only you can tell what it does", level, ln.complex)}
	}
	limit := maxClass(level)
	var used []store.PolicyRule
	for _, r := range results {
		if r.class <= limit {
			continue
		}
		rule, ok := shellRule(rules, r.c)
		if !ok {
			return askShell(level, t, r, len(results))
		}
		if !containsRule(used, rule) {
			used = append(used, rule)
		}
	}
	if len(used) > 0 {
		return byRules(used...)
	}
	return byLevel(level)
}

func containsRule(rs []store.PolicyRule, r store.PolicyRule) bool {
	for _, x := range rs {
		if x.ID == r.ID {
			return true
		}
	}
	return false
}

// shellRule finds a rule whose words begin c's: c sets no variables and
// redirects only inside the worktree.
func shellRule(rules []store.PolicyRule, c simple) (store.PolicyRule, bool) {
	if len(c.env) > 0 || c.nested {
		return store.PolicyRule{}, false
	}
	return findRule(rules, Shell, func(p string) bool { return prefixWords(c.args, strings.Fields(p)) })
}

func askShell(level instincts.Autonomy, t Task, r cmdResult, parts int) Decision {
	what := joinWords(append(append([]word(nil), r.c.env...), r.c.args...))
	reason := fmt.Sprintf("%s: `%s` is not a read", level, clip(what, 120))
	if level == instincts.Cautious {
		reason = fmt.Sprintf("%s: `%s` is not a read, an edit in the worktree or a test or build command of %s", level, clip(what, 120), t.Workspace)
	}
	if r.why != "" {
		reason += " (" + r.why + ")"
	}
	d := Decision{Verdict: Ask, By: ByLevel, Reason: reason}
	if parts == 1 {
		if p := suggestWords(r.c); p != "" {
			d.Remember = &Suggestion{Tool: Shell, Pattern: p}
		}
	}
	return d
}

// maxSuggestWords bounds the command words a suggested rule keeps.
const maxSuggestWords = 3

// suggestWords is the command prefix to offer for remembering: the
// leading literal words, up to the first path, expansion or assignment.
func suggestWords(c simple) string {
	if len(c.env) > 0 || len(c.redirs) > 0 || c.nested {
		return ""
	}
	var out []string
	for _, w := range c.args {
		if len(out) == maxSuggestWords || w.dynamic || w.glob || w.tilde || pathish(w.text) || strings.Contains(w.text, "=") || !plainWord(w.text) {
			break
		}
		out = append(out, w.text)
	}
	return strings.Join(out, " ")
}

func decidePaths(req Request, t Task, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	if len(req.Paths) == 0 {
		return Decision{Verdict: Ask, By: ByUnknown, Reason: fmt.Sprintf("the %s request names no file", req.Kind)}
	}
	a := &analysis{ws: t, dirs: []string{dirOr(t, req.Dir)}}
	for _, p := range req.Paths {
		if credential(p) {
			a.hit(DenyCredentials, p)
		}
		w := word{text: p, tilde: strings.HasPrefix(p, "~")}
		if req.Kind == Delete {
			if pl := a.where(w); pl != inWorktree && pl != inGit {
				a.hit(DenyDelete, p)
			}
		}
	}
	if len(a.hits) > 0 {
		return onDenyList(level, a.hits)
	}
	if level == instincts.Autonomous || req.Kind == Read {
		return byLevel(level)
	}
	limit := maxClass(level)
	var used []store.PolicyRule
	for _, p := range req.Paths {
		rel, inside := relToWorktree(t, dirJoin(dirOr(t, req.Dir), p))
		if inside && classEdit <= limit {
			continue
		}
		if inside {
			if r, ok := findRule(rules, req.Kind, func(g string) bool { return matchGlob(g, rel) }); ok {
				if !containsRule(used, r) {
					used = append(used, r)
				}
				continue
			}
		}
		d := Decision{Verdict: Ask, By: ByLevel}
		switch {
		case !inside:
			d.Reason = fmt.Sprintf("%s: %s is outside the worktree (or under .git)", level, p)
		case level == instincts.Cautious:
			d.Reason = fmt.Sprintf("%s: %s is outside the worktree", level, p)
		default:
			d.Reason = fmt.Sprintf("%s: every change asks (%s %s)", level, req.Kind, rel)
		}
		if inside && len(req.Paths) == 1 {
			d.Remember = &Suggestion{Tool: req.Kind, Pattern: suggestGlob(rel)}
		}
		return d
	}
	if len(used) > 0 {
		return byRules(used...)
	}
	return byLevel(level)
}

func dirJoin(dir, p string) string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return p
	}
	return path.Join(dir, p)
}

// suggestGlob: the file's directory and everything under it, or the file
// itself at the top of the worktree.
func suggestGlob(rel string) string {
	if dir := path.Dir(rel); dir != "." {
		return dir + "/**"
	}
	return rel
}

func decideFetch(req Request, level instincts.Autonomy, rules []store.PolicyRule) Decision {
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return Decision{Verdict: Ask, By: ByUnknown, Reason: fmt.Sprintf("%q is not an http or https address", clip(req.URL, 200))}
	}
	host := strings.ToLower(u.Hostname())
	if level == instincts.Autonomous {
		return byLevel(level)
	}
	if r, ok := findRule(rules, Fetch, func(p string) bool { return matchHost(p, host) }); ok {
		return byRules(r)
	}
	return Decision{Verdict: Ask, By: ByLevel, Reason: fmt.Sprintf("%s: reading %s from the web asks", level, host),
		Remember: &Suggestion{Tool: Fetch, Pattern: host}}
}
