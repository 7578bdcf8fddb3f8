// Package price turns the tokens a coding CLI reported into dollars, for
// the CLIs that report tokens but no cost (Codex, Gemini, Qwen) and for
// Claude Code while it runs (its assistant messages carry tokens; only its
// final result line carries total_cost_usd).
//
// The table is kept by hand, with where each price was read and when. A
// model that is not in it has no price: Cost says so (ok false), and
// callers show the cost as unknown rather than guess. Prices are the
// standard tier per million tokens; long-context surcharges, batch and
// priority tiers are not modelled, so a figure from this table is an
// estimate, marked as such wherever it is shown.
//
// price imports no package of Fetch's; it is safe for concurrent use (the
// table is never written).
package price

import (
	"regexp"
	"strings"
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

// Tokens is a usage to price. Input excludes cached and cache-write
// tokens (the caller converts from its CLI's meaning: OpenAI counts
// cached tokens inside input_tokens, Anthropic does not).
type Tokens struct {
	Input, CachedInput, CacheWrite, Output int64
}

// table holds the known models by normalized name (see normalize).
//
// Anthropic: the three current models with the prices Claude Code 2.1.197
// itself lists in its initialize response ("Opus 4.8 … $5/$25 per Mtok",
// "Sonnet 5 … $3/$15 per Mtok", "Haiku 4.5 … $1/$5 per Mtok"), recorded
// 2026-11-22 in /work/shared/reference/harness-transcripts/
// claude-question-askuserquestion-stdio.txt. The captured Claude run
// (claude-task.jsonl) agrees: 6600 input and 180 output tokens came to its
// total_cost_usd of 0.0375 = 6600×5/1e6 + 180×25/1e6. Cache reads at 0.1×
// and 5-minute cache writes at 1.25× the input price, per
// https://docs.anthropic.com/en/docs/about-claude/pricing (prompt caching
// multipliers), read 2025-10.
//
// OpenAI and Google: list prices from https://openai.com/api/pricing and
// https://ai.google.dev/gemini-api/docs/pricing, read 2025-10 (Gemini
// 2.5 Pro at its ≤200k-token prompt rate). Newer models are not listed
// until their prices are read from the source: their cost is unknown.
var table = map[string]Rates{
	"claude-opus-4-8":  {Input: 5, CachedInput: 0.5, CacheWrite: 6.25, Output: 25},
	"claude-sonnet-5":  {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15},
	"claude-haiku-4-5": {Input: 1, CachedInput: 0.1, CacheWrite: 1.25, Output: 5},
	"gpt-5":            {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-codex":      {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-mini":       {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5-nano":       {Input: 0.05, CachedInput: 0.005, Output: 0.4},
	"gemini-2.5-pro":   {Input: 1.25, CachedInput: 0.31, Output: 10},
	"gemini-2.5-flash": {Input: 0.30, CachedInput: 0.075, Output: 2.5},
}

// Source says where the table's prices come from, for users who ask.
const Source = "Claude Code 2.1.197's own model list (2026-11-22); docs.anthropic.com, openai.com/api/pricing, ai.google.dev pricing (read 2025-10)"

// Of returns the rates of model, if the table has them.
func Of(model string) (Rates, bool) {
	r, ok := table[normalize(model)]
	return r, ok
}

// Cost prices t for model. ok is false when the model's price is not
// known, or when a token count is negative (no CLI truly reports one, and
// priced it would lower a total); the cost is then 0 and must be shown as
// unknown.
func Cost(model string, t Tokens) (usd float64, ok bool) {
	r, ok := Of(model)
	if !ok || t.Input < 0 || t.CachedInput < 0 || t.CacheWrite < 0 || t.Output < 0 {
		return 0, false
	}
	write := r.CacheWrite
	if write == 0 {
		write = r.Input
	}
	usd = (float64(t.Input)*r.Input + float64(t.CachedInput)*r.CachedInput +
		float64(t.CacheWrite)*write + float64(t.Output)*r.Output) / 1e6
	return usd, true
}

// dated matches the date suffix of a pinned model id
// ("claude-haiku-4-5-20251001", "gpt-5-2025-08-07").
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// normalize maps the names CLIs report to the table's: lower case,
// without a provider prefix ("anthropic/", "models/"), a context-size tag
// ("claude-opus-4-8[1m]") or a date suffix.
func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "["); i >= 0 {
		m = m[:i]
	}
	return dated.ReplaceAllString(m, "")
}
