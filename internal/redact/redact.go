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
	"sync"
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
	// assignment: the rule only runs where assignmentAfterKeyword holds.
	assignment bool
	// keywordIDs are keywords' ids in the rule set's keywordIndex.
	keywordIDs []int
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
	// raw are the configured secrets that are not UTF-8, replaced byte
	// for byte as well: the regexp reads such bytes differently where the
	// text around them completes a character.
	raw []string
	// settle is set when a configured secret could appear again out of
	// a mask and the text around it (a secret holding '[' or ']', or not
	// UTF-8): String then replaces until none is left.
	settle bool
	// disguised finds the configured secrets in disguise (disguise.go).
	disguised *disguised
	rules     []rule
	global    []allowlist
	keywords  *keywordIndex
}

// New builds a Redactor for the configured secrets and the embedded
// rules. Empty and very short values are ignored, and so is a value that
// is part of Mask itself ("REDACTED"), which no mask can hide.
func New(secrets ...string) (*Redactor, error) {
	r := &Redactor{}
	var quoted, kept []string
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) < minSecretLen || strings.Contains(strings.ToLower(Mask), strings.ToLower(s)) {
			continue
		}
		kept = append(kept, s)
		quoted = append(quoted, quoteSecret(s))
		if !utf8.ValidString(s) {
			r.raw = append(r.raw, s)
			r.settle = true
		}
		if strings.ContainsAny(s, "[]") {
			r.settle = true
		}
	}
	if len(quoted) > 0 {
		// Longest first, so that a secret containing another is masked
		// whole.
		sort.Slice(quoted, func(i, j int) bool { return len(quoted[i]) > len(quoted[j]) })
		r.secrets = regexp.MustCompile("(?i)" + strings.Join(quoted, "|"))
		r.disguised = newDisguised(kept)
	}

	rs, err := builtin()
	if err != nil {
		return nil, err
	}
	r.rules, r.global, r.keywords = rs.rules, rs.global, &rs.keywords
	return r, nil
}

// ruleSet is the compiled embedded rules: read-only once built, shared
// by every Redactor.
type ruleSet struct {
	rules  []rule
	global []allowlist
	// keywords are the rules' keywords, each once (rule.keywordIDs).
	keywords keywordIndex
	ids      map[string]int
}

// builtin compiles the embedded rules once per process: it is the
// expensive part of New.
var builtin = sync.OnceValues(func() (*ruleSet, error) {
	gl, err := ruleFiles.ReadFile("rules/gitleaks.toml")
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	if sum := sha256.Sum256(gl); hex.EncodeToString(sum[:]) != gitleaksSHA256 {
		return nil, fmt.Errorf("redact: rules/gitleaks.toml differs from gitleaks %s; refresh it with scripts/update-gitleaks-rules.sh", GitleaksVersion)
	}
	rs := &ruleSet{}
	for _, name := range []string{"rules/gitleaks.toml", "rules/fetch.toml"} {
		if err := rs.load(name); err != nil {
			return nil, fmt.Errorf("redact: %s: %w", name, err)
		}
	}
	return rs, nil
})

func (r *ruleSet) load(name string) error {
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
		ru := rule{id: d.ID, re: re, secretGroup: d.SecretGroup, entropy: d.Entropy, assignment: d.ID == genericRule}
		if r.ids == nil {
			r.ids = map[string]int{}
		}
		for _, k := range d.Keywords {
			k = strings.ToLower(k)
			ru.keywords = append(ru.keywords, k)
			ru.keywordIDs = append(ru.keywordIDs, r.keywords.add(k, r.ids))
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
		s = r.configured(s)
		s = r.undisguise(s)
	}
	lower := strings.ToLower(s)
	found := r.keywords.find(lower)
	var spans [][2]int
	for i := range r.rules {
		spans = append(spans, r.rules[i].find(s, lower, found, r.global)...)
	}
	if len(spans) == 0 {
		return s
	}
	return mask(s, spans)
}

// maxSettle bounds the passes that mask configured secrets appearing
// again; past it they are cut out without a mask.
const maxSettle = 4

// configured replaces the configured secrets in s.
func (r *Redactor) configured(s string) string {
	s = r.replaceConfigured(s, Mask)
	if !r.settle {
		return s
	}
	for i := 0; i < maxSettle && r.holdsConfigured(s); i++ {
		s = r.replaceConfigured(s, Mask)
	}
	// Every pass of this loop makes s shorter.
	for r.holdsConfigured(s) {
		s = r.replaceConfigured(s, "")
	}
	return s
}

// undisguise masks the configured secrets in disguise in s.
func (r *Redactor) undisguise(s string) string {
	for i := 0; i <= maxSettle; i++ {
		spans := r.disguised.spans(s)
		if len(spans) == 0 {
			return s
		}
		s = mask(s, spans)
		if !r.settle {
			return s
		}
	}
	return s
}

func (r *Redactor) replaceConfigured(s, with string) string {
	s = r.secrets.ReplaceAllLiteralString(s, with)
	for _, raw := range r.raw {
		s = strings.ReplaceAll(s, raw, with)
	}
	return s
}

func (r *Redactor) holdsConfigured(s string) bool {
	if r.secrets.MatchString(s) {
		return true
	}
	for _, raw := range r.raw {
		if strings.Contains(s, raw) {
			return true
		}
	}
	return false
}

// quoteSecret is a regular expression matching s literally. A byte that
// is not UTF-8 becomes U+FFFD, which is how the regexp package reads such
// a byte in the text.
func quoteSecret(s string) string {
	if utf8.ValidString(s) {
		return regexp.QuoteMeta(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\x{FFFD}`)
		} else {
			b.WriteString(regexp.QuoteMeta(s[i : i+n]))
		}
		i += n
	}
	return b.String()
}

// Bytes redacts b when it is text; other data is returned unchanged.
func (r *Redactor) Bytes(b []byte) []byte {
	if !utf8.Valid(b) {
		return b
	}
	return []byte(r.String(string(b)))
}

// find returns the byte ranges of s holding this rule's secrets.
func (ru *rule) find(s, lower string, keywords []bool, global []allowlist) [][2]int {
	if len(ru.keywordIDs) > 0 {
		found := false
		for _, id := range ru.keywordIDs {
			if keywords[id] {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
		if ru.assignment && !assignmentAfterKeyword(lower, ru.keywords) {
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
