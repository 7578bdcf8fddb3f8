package harness

import (
	"cmp"

	"github.com/fetch-dev/fetch/internal/price"
)

// withPrice sets u's cost from the price table when the CLI reported
// tokens but no dollars: CostEstimated when model is priced (by its own
// entry, its family's, or — PricedAs — its provider's dearest model),
// CostUnknown otherwise (a model of no known provider, or none named). A
// usage that already has a cost, or has no tokens, is returned as it is.
// cachedInInput says the CLI counts cached tokens inside InputTokens
// (OpenAI's and Gemini's meaning; Anthropic's input_tokens exclude them).
func withPrice(u Usage, model string, cachedInInput bool) Usage {
	if u.CostUSD != 0 || (u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadTokens == 0 && u.CacheWriteTokens == 0) {
		return u
	}
	in := u.InputTokens
	if cachedInInput {
		in = max(in-u.CacheReadTokens-u.CacheWriteTokens, 0)
	}
	cost, p, ok := price.Cost(model, price.Tokens{Input: in, CachedInput: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Output: u.OutputTokens})
	if !ok {
		u.CostUnknown = true
		return u
	}
	u.CostUSD, u.CostEstimated = cost, true
	if p.Fallback {
		u.PricedAs = p.Model
	}
	return u
}

// codexModel is the model Codex's tokens are priced by: the task's, or,
// when it named none (Codex's stream names none), OpenAI's dearest, since
// Codex's default model is OpenAI's.
func codexModel(model string) string { return cmp.Or(model, "openai/") }

// EstimatedAs is how a cost priced as pricedAs (Usage.PricedAs) is marked
// wherever it is shown.
func EstimatedAs(pricedAs string) string {
	return "(estimated: Fetch does not know the price of the CLI's model; it priced its tokens as " + pricedAs + ", to err high)"
}
