package policy

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Rules the owner remembers ("Allow for this task", "Always allow in this
// workspace") are a tool kind and a pattern:
//
//   - shell: command words, matched word for word against the start of
//     every simple command of a plain command line (never as a string
//     prefix: "npm test" does not allow npm test; curl evil, nor npm
//     tests);
//   - edit, delete, read: a path glob relative to the worktree (* within
//     a name, ** across directories), never outside it nor under .git;
//   - fetch: a host name, or *.example.com for its subdomains;
//   - other: a tool's exact name.
//
// A rule never overrides the deny list.

// maxRuleWords and maxPattern bound a pattern.
const (
	maxRuleWords = 8
	maxPattern   = 200
)

// unboundable are programs that run whatever follows them: a rule for
// them would allow every command.
var unboundable = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "fish": true,
	"eval": true, "source": true, ".": true, "exec": true, "command": true, "builtin": true,
	"env": true, "sudo": true, "doas": true, "xargs": true, "nohup": true, "time": true,
	"nice": true, "timeout": true, "setsid": true, "su": true, "runuser": true, "chroot": true,
	"busybox": true, "toybox": true, "watch": true, "parallel": true, "script": true, "strace": true,
}

// ErrBadRule is a pattern the policy refuses; the error says why.
var ErrBadRule = errors.New("bad rule")

// CheckRule validates a rule before it is stored.
func CheckRule(k Kind, pattern string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("policy: %w: %s", ErrBadRule, fmt.Sprintf(format, args...))
	}
	if pattern == "" || len(pattern) > maxPattern {
		return bad("a pattern has 1 to %d characters", maxPattern)
	}
	switch k {
	case Shell:
		words := strings.Fields(pattern)
		if strings.Join(words, " ") != pattern || len(words) > maxRuleWords {
			return bad("a command is 1 to %d words separated by single spaces", maxRuleWords)
		}
		for _, w := range words {
			if !plainWord(w) {
				return bad("%q is not a plain command word (letters, digits and ._/:@%%+=,- only)", w)
			}
		}
		if unboundable[base(words[0])] {
			return bad("%s runs whatever follows it; allow the command it runs instead", words[0])
		}
	case Edit, Delete, Read:
		if path.IsAbs(pattern) || strings.HasPrefix(pattern, "~") || path.Clean(pattern) != pattern {
			return bad("a path glob is relative to the worktree and clean (no ./, //, trailing /)")
		}
		for _, comp := range strings.Split(pattern, "/") {
			if comp == ".." || comp == ".git" {
				return bad("a path glob stays inside the worktree and out of .git")
			}
			if comp == "**" {
				continue
			}
			if _, err := path.Match(comp, ""); err != nil {
				return bad("%q is not a glob", comp)
			}
		}
	case Fetch:
		host := strings.TrimPrefix(pattern, "*.")
		if host == "" || strings.ToLower(pattern) != pattern || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" || !strings.Contains(host, ".") && host != "localhost" {
			return bad("a host is like pkg.go.dev or *.github.com, in lower case")
		}
	case Other:
		if strings.ContainsAny(pattern, " \t\n") {
			return bad("a tool name has no spaces")
		}
	default:
		return bad("%q is not a tool kind to remember (shell, edit, delete, read, fetch or other)", k)
	}
	return nil
}

func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/:@%+=,-", r)) {
			return false
		}
	}
	return true
}

// matchGlob matches a worktree-relative path against a rule's glob.
func matchGlob(glob, rel string) bool {
	if rel == "." || rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return false
	}
	return matchComps(strings.Split(glob, "/"), strings.Split(rel, "/"))
}

func matchComps(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchComps(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], p[0]); !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

func matchHost(pattern, host string) bool {
	if sub, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return host == pattern
}

// ParseRuleID reads the ID of /policy remove ID.
func ParseRuleID(s string) (int64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("policy: %q is not a rule id: use /policy remove ID with an id that /policy lists", s)
	}
	return id, nil
}
