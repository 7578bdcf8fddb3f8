package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAssignmentPrefilterNeverHidesAMatch: wherever the generic rule's
// expression matches, the prefilter lets it run. The texts mix its
// keywords, word characters, blanks, quotes, operators and values the way
// assignments, prose and logs do, plus the cases folding adds.
func TestAssignmentPrefilterNeverHidesAMatch(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var generic *rule
	for i := range r.rules {
		if r.rules[i].id == genericRule {
			generic = &r.rules[i]
		}
	}
	if generic == nil || !generic.assignment {
		t.Fatalf("no %s rule with the prefilter", genericRule)
	}
	fixed := []string{
		`api_key = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"`,
		`password: hunter2hunter2hunter2`,
		"TOKEN\n=aB3dE5fG7hJ9kL1mN",
		`secret  "  ,'x9Y8z7W6v5U4t3'`,
		`auth-token|| Q1w2E3r4T5y6U7i8`,
		`creds ?= s3cr3tV4lu3s3cr3t`,
		"the KEY is ſecret => q1w2e3r4t5y6u7i8o9",
		"apiKey=\u212a1234567890abcdef",
		"Today: 1200 tokens, $0.5000",
		"LLM: none configured; commands work, requests in plain words need OPENROUTER_API_KEY",
	}
	parts := []string{"api", "key", "token", "secret", "passwd", "auth", "access", "creds", "credential", "Api", "API",
		"_", "-", ".", " ", "\t", "\n", "'", `"`, "=", ":", ">", "|", "?", ",", ";", "/", "$", "x", "A1b2C3d4E5f6G7h8", "0.5000", "ſ", "\u212a", "é"}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := fixed
	for range 20000 {
		var b strings.Builder
		for range 3 + rng.IntN(14) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		texts = append(texts, b.String())
	}
	matched := 0
	for _, s := range texts {
		if generic.re.MatchString(s) {
			matched++
			if !assignmentAfterKeyword(strings.ToLower(s), generic.keywords) {
				t.Errorf("%q matches %s but the prefilter would skip it", s, genericRule)
			}
		}
	}
	if matched < 100 {
		t.Fatalf("only %d texts match the rule: the test does not exercise it", matched)
	}
	// And it skips what cannot match.
	for _, s := range []string{fixed[len(fixed)-1], "the api is documented", "a key, no value"} {
		if generic.re.MatchString(s) {
			continue
		}
		if s != "a key, no value" && assignmentAfterKeyword(strings.ToLower(s), generic.keywords) {
			t.Errorf("%q cannot match, and the prefilter lets it run", s)
		}
	}
}

// TestKeywordIndexFindsWhatContainsFinds: the one-pass keyword index
// reports exactly the keywords strings.Contains finds, on texts built from
// the keywords themselves, their pieces and other bytes.
func TestKeywordIndexFindsWhatContainsFinds(t *testing.T) {
	rs, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	x := &rs.keywords
	if len(x.words) < 50 {
		t.Fatalf("only %d keywords indexed", len(x.words))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{" ", "\n", "=", "x", "é", "🟢"}
	for _, w := range x.words {
		pieces = append(pieces, w, w[:len(w)/2], w[len(w)/2:])
	}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		lower := strings.ToLower(b.String())
		found := x.find(lower)
		for id, w := range x.words {
			if found[id] != strings.Contains(lower, w) {
				t.Fatalf("%q: keyword %q found=%v, strings.Contains=%v", lower, w, found[id], !found[id])
			}
		}
	}
}
