package code

import (
	"regexp"
	"strings"
)

// Bounds on .gitignore files, which the kennel writes.
const (
	maxIgnoreFile  = 64 << 10
	maxIgnoreRules = 2000
)

// ignoreRule is one line of a .gitignore, compiled.
type ignoreRule struct {
	base    string // directory of the .gitignore, "" at the top
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ignorer holds the .gitignore rules met so far on a walk, outermost
// first; the last rule that matches decides, as in git.
type ignorer struct {
	rules []ignoreRule
}

// add parses the .gitignore found in directory base ("" at the top).
func (ig *ignorer) add(base string, data []byte) {
	if len(data) > maxIgnoreFile {
		data = data[:maxIgnoreFile]
	}
	for _, line := range strings.Split(string(data), "\n") {
		if len(ig.rules) >= maxIgnoreRules {
			return
		}
		line = strings.TrimRight(line, "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		re, err := regexp.Compile(globRegexp(line, anchored))
		if err != nil {
			continue
		}
		r.re = re
		ig.rules = append(ig.rules, r)
	}
}

// ignored reports whether the slash path rel (relative to the top) is
// ignored.
func (ig *ignorer) ignored(rel string, dir bool) bool {
	out := false
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = rel[len(r.base)+1:]
		}
		if r.re.MatchString(p) {
			out = !r.negate
		}
	}
	return out
}

// globRegexp translates a gitignore glob into a regexp over a slash path
// relative to the .gitignore's directory. An unanchored pattern (no slash)
// matches at any depth.
func globRegexp(glob string, anchored bool) string {
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "/**") && i+3 == len(glob):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(string(glob[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	// A pattern matching a directory also covers what is inside it; the
	// walk skips ignored directories, so this matters for direct reads.
	b.WriteString("(?:/.*)?$")
	return b.String()
}
