// Package price turns the tokens a coding CLI reported into dollars, for
// the CLIs that report tokens but no cost (Codex, Gemini, Qwen) and for
// Claude Code while it runs (its assistant messages carry tokens; only its
// final result line carries total_cost_usd).
//
// The table is kept by hand, each price with where it was read and when;
// the owner extends or overrides it with a price file (ParseFile, Use).
// A model is priced by its own entry, or by the entry of its family when
// it names a pinned date ("claude-haiku-4-5-20251001" as
// "claude-haiku-4-5"). A model of a known provider (Anthropic, OpenAI,
// Google) without an entry is priced as the dearest known model of that
// provider, and says so (Price.Fallback): an estimate that errs high, so
// that a cap still holds. A model whose provider is not known has no
// price: Cost says so (ok false), and callers show the cost as unknown;
// when a budget must hold, cmd/fetch uses a PricingUnknown table, which
// prices it as the dearest model of all.
// Prices are the standard tier per million tokens; long-context
// surcharges, batch and priority tiers are not modelled, so a figure from
// this table is an estimate, marked as such wherever it is shown.
//
// price imports no package of Fetch's; it is safe for concurrent use (a
// Table is never written; Use swaps the one in use atomically).
package price

import (
	"cmp"
	"regexp"
	"strings"
	"sync/atomic"
)

// Rates are dollars per million tokens.
type Rates struct {
	Input float64
	// CachedInput is a cache read; CacheWrite a cache write (Anthropic's
	// 5-minute cache). Zero CacheWrite means writes cost Input.
	CachedInput float64
	CacheWrite  float64
	Output      float64
}

// Entry is one model's price in the table, with where it was read and
// when (a date: 2025-10 or 2025-10-07).
type Entry struct {
	Model string
	Rates
	Source string
	Date   string
}

// Tokens is a usage to price. Input excludes cached and cache-write
// tokens (the caller converts from its CLI's meaning: OpenAI counts
// cached tokens inside input_tokens, Anthropic does not).
type Tokens struct {
	Input, CachedInput, CacheWrite, Output int64
}

// Sources of the built-in table.
const (
	// Claude Code 2.1.197 lists the prices of its three current models in
	// its initialize response ("Opus 4.8 … $5/$25 per Mtok", "Sonnet 5 …
	// $3/$15 per Mtok", "Haiku 4.5 … $1/$5 per Mtok"), recorded
	// 2026-11-22 in /work/shared/reference/harness-transcripts/
	// claude-question-askuserquestion-stdio.txt. The captured Claude run
	// (claude-task.jsonl) agrees: 6600 input and 180 output tokens came to
	// its total_cost_usd of 0.0375 = 6600×5/1e6 + 180×25/1e6. Cache reads
	// at 0.1× and 5-minute cache writes at 1.25× the input price, per the
	// prompt caching multipliers of the pricing page, read 2025-10.
	sourceClaude = "Claude Code 2.1.197's own model list; cache multipliers from https://docs.anthropic.com/en/docs/about-claude/pricing"
	dateClaude   = "2026-11-22"
	// List prices read 2025-10 (Gemini 2.5 Pro at its ≤200k-token prompt
	// rate). Newer models are not listed until their prices are read from
	// the source: until then they are priced as their provider's dearest.
	sourceOpenAI = "https://openai.com/api/pricing"
	sourceGoogle = "https://ai.google.dev/gemini-api/docs/pricing"
	dateLists    = "2025-10"
)

// builtin is the table Fetch ships.
var builtin = []Entry{
	{"claude-opus-4-8", Rates{Input: 5, CachedInput: 0.5, CacheWrite: 6.25, Output: 25}, sourceClaude, dateClaude},
	{"claude-sonnet-5", Rates{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}, sourceClaude, dateClaude},
	{"claude-haiku-4-5", Rates{Input: 1, CachedInput: 0.1, CacheWrite: 1.25, Output: 5}, sourceClaude, dateClaude},
	{"gpt-5", Rates{Input: 1.25, CachedInput: 0.125, Output: 10}, sourceOpenAI, dateLists},
	{"gpt-5-codex", Rates{Input: 1.25, CachedInput: 0.125, Output: 10}, sourceOpenAI, dateLists},
	{"gpt-5-mini", Rates{Input: 0.25, CachedInput: 0.025, Output: 2}, sourceOpenAI, dateLists},
	{"gpt-5-nano", Rates{Input: 0.05, CachedInput: 0.005, Output: 0.4}, sourceOpenAI, dateLists},
	{"gemini-2.5-pro", Rates{Input: 1.25, CachedInput: 0.31, Output: 10}, sourceGoogle, dateLists},
	{"gemini-2.5-flash", Rates{Input: 0.30, CachedInput: 0.075, Output: 2.5}, sourceGoogle, dateLists},
}

// Table is a set of model prices by name (see clean).
type Table struct {
	entries map[string]Entry
	// anyProvider: a model of no known provider (or none named) is
	// priced as the dearest entry of all (PricingUnknown).
	anyProvider bool
}

// Builtin returns the table Fetch ships.
func Builtin() *Table { return (&Table{}).With(builtin...) }

// With returns a copy of t with entries added; an entry for a model t
// already has replaces it.
func (t *Table) With(entries ...Entry) *Table {
	out := &Table{entries: make(map[string]Entry, len(t.entries)+len(entries)), anyProvider: t.anyProvider}
	for k, e := range t.entries {
		out.entries[k] = e
	}
	for _, e := range entries {
		e.Model = clean(e.Model)
		out.entries[e.Model] = e
	}
	return out
}

// PricingUnknown returns a copy of t that prices a model of no known
// provider, or a usage that names no model, as the dearest model of all
// (Fallback), instead of leaving it without a price: for when a budget
// must hold whatever the model.
func (t *Table) PricingUnknown() *Table {
	out := t.With()
	out.anyProvider = true
	return out
}

// Price is how a model is priced: by Entry, which is the model's own (or
// its family's), or, when Fallback, the dearest known model of the
// model's provider, for a model whose price the table lacks.
type Price struct {
	Entry
	Fallback bool
}

// Lookup finds how model is priced: its own entry first, then its
// family's without a date suffix, then, for a model of a known provider,
// the dearest entry of that provider (Fallback); a provider alone
// ("openai/": the CLI's default model, which it does not name) is priced
// so too. ok is false when the model's provider is not known either,
// unless the table is PricingUnknown: then the dearest entry of all.
func (t *Table) Lookup(model string) (Price, bool) {
	if m := clean(model); m != "" {
		if e, ok := t.entries[m]; ok {
			return Price{Entry: e}, true
		}
		if e, ok := t.entries[dated.ReplaceAllString(m, "")]; ok {
			return Price{Entry: e}, true
		}
	}
	p := providerOf(model)
	if p == "" && !t.anyProvider {
		return Price{}, false
	}
	var dearest Entry
	found := false
	for _, e := range t.entries {
		if (p == "" || providerOf(e.Model) == p) && (!found || dearer(e, dearest)) {
			dearest, found = e, true
		}
	}
	return Price{Entry: dearest, Fallback: true}, found
}

// dearer orders entries by output price, then input price, then name (for
// a choice that does not depend on map order).
func dearer(a, b Entry) bool {
	if c := cmp.Compare(a.Output, b.Output); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(a.Input, b.Input); c != 0 {
		return c > 0
	}
	return a.Model < b.Model
}

// Cost prices tok by p. ok is false when a token count is negative (no
// CLI truly reports one, and priced it would lower a total).
func (p Price) Cost(tok Tokens) (usd float64, ok bool) {
	if tok.Input < 0 || tok.CachedInput < 0 || tok.CacheWrite < 0 || tok.Output < 0 {
		return 0, false
	}
	r := p.Rates
	write := r.CacheWrite
	if write == 0 {
		write = r.Input
	}
	return (float64(tok.Input)*r.Input + float64(tok.CachedInput)*r.CachedInput +
		float64(tok.CacheWrite)*write + float64(tok.Output)*r.Output) / 1e6, true
}

// inUse is the table the package-level functions use: Builtin until Use.
var inUse atomic.Pointer[Table]

func init() { inUse.Store(Builtin()) }

// Use makes t the table Of and Cost use, once at start (cmd/fetch: the
// built-in table extended by the owner's price file).
func Use(t *Table) { inUse.Store(t) }

// Of returns how model is priced by the table in use (Table.Lookup).
func Of(model string) (Price, bool) { return inUse.Load().Lookup(model) }

// Cost prices t for model with the table in use. ok is false when the
// model's price is not known, or when a token count is negative; the cost
// is then 0 and must be shown as unknown.
func Cost(model string, t Tokens) (usd float64, p Price, ok bool) {
	p, ok = Of(model)
	if !ok {
		return 0, Price{}, false
	}
	usd, ok = p.Cost(t)
	return usd, p, ok
}

// dated matches the date suffix of a pinned model id
// ("claude-haiku-4-5-20251001", "gpt-5-2025-08-07").
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// clean maps the names CLIs report to the table's: lower case, without a
// provider prefix ("anthropic/", "models/") or a context-size tag
// ("claude-opus-4-8[1m]").
func clean(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "["); i >= 0 {
		m = m[:i]
	}
	return strings.TrimSpace(m)
}

// openAIReasoning matches OpenAI's o-series ("o3", "o4-mini").
var openAIReasoning = regexp.MustCompile(`^o[1-9](-|$)`)

// providerOf names the company that sells model, from a provider prefix
// ("anthropic/…") or the model family ("claude-…", "gpt-…", "gemini-…");
// "" when it is neither.
func providerOf(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if p, _, ok := strings.Cut(m, "/"); ok {
		switch p {
		case "anthropic", "openai", "google":
			return p
		case "gemini":
			return "google"
		}
	}
	m = clean(m)
	switch {
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "codex"), openAIReasoning.MatchString(m):
		return "openai"
	case strings.HasPrefix(m, "gemini"):
		return "google"
	}
	return ""
}
