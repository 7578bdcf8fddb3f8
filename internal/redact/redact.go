package redact

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// GitleaksVersion is the gitleaks release rules/gitleaks.toml was copied
// from, and gitleaksSHA256 its checksum there.
const (
	GitleaksVersion = "v8.30.1"
	gitleaksSHA256  = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"
)

// Mask replaces every secret found.
const Mask = "[REDACTED]"

// minSecretLen is the shortest configured secret that is redacted: a
// shorter value would mask ordinary words all over the text.
const minSecretLen = 6

//go:embed rules/gitleaks.toml rules/fetch.toml
var ruleFiles embed.FS

// ruleFile is the part of gitleaks' configuration format that applies to
// text (paths and commits do not).
type ruleFile struct {
	Allowlist  *allowlistDef  `toml:"allowlist"`
	Allowlists []allowlistDef `toml:"allowlists"`
	Rules      []ruleDef      `toml:"rules"`
}

type ruleDef struct {
	ID          string         `toml:"id"`
	Regex       string         `toml:"regex"`
	SecretGroup int            `toml:"secretGroup"`
	Entropy     float64        `toml:"entropy"`
	Keywords    []string       `toml:"keywords"`
	Allowlist   *allowlistDef  `toml:"allowlist"`
	Allowlists  []allowlistDef `toml:"allowlists"`
}

type allowlistDef struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

type rule struct {
	id          string
	re          *regexp.Regexp
	secretGroup int
	entropy     float64
	keywords    []string
	allow       []allowlist
}

type allowlist struct {
	and    bool
	target string // "" (the secret), "match" or "line"
	// unmatchable is set for an AND allowlist that also names paths or
	// commits: text has neither, so it never allows.
	unmatchable bool
	regexes     []*regexp.Regexp
	stopWords   []string
}

// Redactor removes secrets from text.
type Redactor struct {
	// secrets matches the configured secrets, in any case: a secret
	// lower-cased on its way (a command name, a URL host) still gives it
	// away.
	secrets *regexp.Regexp
	rules   []rule
	global  []allowlist
}

// New builds a Redactor for the configured secrets (empty and very short
// values are ignored) and the embedded rules.
func New(secrets ...string) (*Redactor, error) {
	r := &Redactor{}
	var quoted []string
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) >= minSecretLen {
			quoted = append(quoted, regexp.QuoteMeta(s))
		}
	}
	if len(quoted) > 0 {
		// Longest first, so that a secret containing another is masked
		// whole.
		sort.Slice(quoted, func(i, j int) bool { return len(quoted[i]) > len(quoted[j]) })
		r.secrets = regexp.MustCompile("(?i)" + strings.Join(quoted, "|"))
	}

	gl, err := ruleFiles.ReadFile("rules/gitleaks.toml")
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	if sum := sha256.Sum256(gl); hex.EncodeToString(sum[:]) != gitleaksSHA256 {
		return nil, fmt.Errorf("redact: rules/gitleaks.toml differs from gitleaks %s; refresh it with scripts/update-gitleaks-rules.sh", GitleaksVersion)
	}
	for _, name := range []string{"rules/gitleaks.toml", "rules/fetch.toml"} {
		if err := r.load(name); err != nil {
			return nil, fmt.Errorf("redact: %s: %w", name, err)
		}
	}
	return r, nil
}

func (r *Redactor) load(name string) error {
	data, err := ruleFiles.ReadFile(name)
	if err != nil {
		return err
	}
	var f ruleFile
	if _, err := toml.Decode(string(data), &f); err != nil {
		return err
	}
	globals := f.Allowlists
	if f.Allowlist != nil {
		globals = append(globals, *f.Allowlist)
	}
	for _, a := range globals {
		al, err := compileAllowlist(a)
		if err != nil {
			return fmt.Errorf("global allowlist: %w", err)
		}
		r.global = append(r.global, al)
	}
	for _, d := range f.Rules {
		if d.Regex == "" {
			continue // a rule on file paths only
		}
		re, err := regexp.Compile(d.Regex)
		if err != nil {
			return fmt.Errorf("rule %s: %w", d.ID, err)
		}
		ru := rule{id: d.ID, re: re, secretGroup: d.SecretGroup, entropy: d.Entropy}
		for _, k := range d.Keywords {
			ru.keywords = append(ru.keywords, strings.ToLower(k))
		}
		defs := d.Allowlists
		if d.Allowlist != nil {
			defs = append(defs, *d.Allowlist)
		}
		for _, a := range defs {
			al, err := compileAllowlist(a)
			if err != nil {
				return fmt.Errorf("rule %s: %w", d.ID, err)
			}
			ru.allow = append(ru.allow, al)
		}
		r.rules = append(r.rules, ru)
	}
	return nil
}

func compileAllowlist(a allowlistDef) (allowlist, error) {
	al := allowlist{and: strings.EqualFold(a.Condition, "AND"), target: a.RegexTarget}
	if al.and && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		al.unmatchable = true
	}
	for _, s := range a.Regexes {
		re, err := regexp.Compile(s)
		if err != nil {
			return allowlist{}, err
		}
		al.regexes = append(al.regexes, re)
	}
	for _, w := range a.StopWords {
		al.stopWords = append(al.stopWords, strings.ToLower(w))
	}
	return al, nil
}

// allows tells whether the allowlist lets a candidate secret through.
func (a allowlist) allows(secret, match, line string) bool {
	if a.unmatchable {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	var checks, hits int
	if len(a.regexes) > 0 {
		checks++
		for _, re := range a.regexes {
			if re.MatchString(target) {
				hits++
				break
			}
		}
	}
	if len(a.stopWords) > 0 {
		checks++
		lower := strings.ToLower(secret)
		for _, w := range a.stopWords {
			if strings.Contains(lower, w) {
				hits++
				break
			}
		}
	}
	if checks == 0 {
		return false
	}
	if a.and {
		return hits == checks
	}
	return hits > 0
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r.secrets != nil {
		s = r.secrets.ReplaceAllLiteralString(s, Mask)
	}
	lower := strings.ToLower(s)
	var spans [][2]int
	for i := range r.rules {
		spans = append(spans, r.rules[i].find(s, lower, r.global)...)
	}
	if len(spans) == 0 {
		return s
	}
	return mask(s, spans)
}

// Bytes redacts b when it is text; other data is returned unchanged.
func (r *Redactor) Bytes(b []byte) []byte {
	if !utf8.Valid(b) {
		return b
	}
	return []byte(r.String(string(b)))
}

// find returns the byte ranges of s holding this rule's secrets.
func (ru *rule) find(s, lower string, global []allowlist) [][2]int {
	if len(ru.keywords) > 0 {
		found := false
		for _, k := range ru.keywords {
			if strings.Contains(lower, k) {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	var spans [][2]int
	for _, m := range ru.re.FindAllStringIndex(s, -1) {
		match := strings.Trim(s[m[0]:m[1]], "\n")
		start := m[0] + strings.Index(s[m[0]:m[1]], match)
		secret := match
		if groups := ru.re.FindStringSubmatch(match); len(groups) >= 2 {
			switch {
			case ru.secretGroup > 0 && ru.secretGroup < len(groups):
				secret = groups[ru.secretGroup]
			case ru.secretGroup == 0:
				for _, g := range groups[1:] {
					if g != "" {
						secret = g
						break
					}
				}
			}
		}
		if secret == "" {
			continue
		}
		if ru.entropy != 0 && entropy(secret) <= ru.entropy {
			continue
		}
		line := lineAround(s, start, start+len(match))
		if allowed(global, secret, match, line) || allowed(ru.allow, secret, match, line) {
			continue
		}
		off := strings.Index(match, secret)
		if off < 0 {
			continue
		}
		spans = append(spans, [2]int{start + off, start + off + len(secret)})
	}
	return spans
}

func allowed(lists []allowlist, secret, match, line string) bool {
	for _, a := range lists {
		if a.allows(secret, match, line) {
			return true
		}
	}
	return false
}

func lineAround(s string, from, to int) string {
	start := strings.LastIndexByte(s[:from], '\n') + 1
	end := strings.IndexByte(s[to:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : to+end]
}

// mask replaces the (possibly overlapping) spans of s with Mask.
func mask(s string, spans [][2]int) string {
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	pos := 0
	for _, sp := range spans {
		if sp[1] <= pos {
			continue
		}
		if sp[0] < pos {
			sp[0] = pos
		} else {
			b.WriteString(s[pos:sp[0]])
			b.WriteString(Mask)
		}
		pos = sp[1]
	}
	b.WriteString(s[pos:])
	return b.String()
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks
// computes it.
func entropy(s string) float64 {
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	inv := 1 / float64(len(s))
	var e float64
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}
