package redact

import (
	"sort"
	"strings"
)

// Finding is a secret found in a text: the rule that matched it and the
// line it starts on (1 for the first). It never holds the secret.
type Finding struct {
	Rule string `json:"rule"`
	Line int    `json:"line"`
}

// ConfiguredRule names a finding of one of the secrets the Redactor was
// built with (rather than of a gitleaks rule).
const ConfiguredRule = "configured-secret"

// Find returns the secrets in text, by line and then rule, without saying
// what they are: the configured secrets and the rules' matches (allowlists
// and entropy thresholds applied, as String does).
func (r *Redactor) Find(text string) []Finding {
	if text == "" {
		return nil
	}
	var out []Finding
	seen := map[Finding]bool{}
	add := func(rule string, offset int) {
		f := Finding{Rule: rule, Line: 1 + strings.Count(text[:offset], "\n")}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if r.secrets != nil {
		for _, m := range r.secrets.FindAllStringIndex(text, -1) {
			add(ConfiguredRule, m[0])
		}
		for _, sp := range r.disguised.spans(text) {
			add(ConfiguredRule, sp[0])
		}
	}
	lower := strings.ToLower(text)
	found := r.keywords.find(lower)
	for i := range r.rules {
		for _, sp := range r.rules[i].find(text, lower, found, r.global) {
			add(r.rules[i].id, sp[0])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}
