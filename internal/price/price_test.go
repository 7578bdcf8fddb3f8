package price

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	for _, c := range []struct {
		model  string
		tokens Tokens
		want   float64
		ok     bool
	}{
		// claude-task.jsonl: result total_cost_usd 0.0375 for 6600 in, 180 out.
		{"claude-opus-4-8", Tokens{Input: 6600, Output: 180}, 0.0375, true},
		{"claude-opus-4-8[1m]", Tokens{Input: 6600, Output: 180}, 0.0375, true},
		{"claude-haiku-4-5-20251001", Tokens{Input: 1e6, CachedInput: 1e6, CacheWrite: 1e6, Output: 1e6}, 1 + 0.1 + 1.25 + 5, true},
		{"openai/gpt-5", Tokens{Input: 1e6, CachedInput: 1e6, CacheWrite: 1e6, Output: 1e6}, 1.25 + 0.125 + 1.25 + 10, true},
		{"gpt-5-2025-08-07", Tokens{Output: 1e6}, 10, true},
		{"some-new-model", Tokens{Input: 1000}, 0, false},
		{"", Tokens{Input: 1000}, 0, false},
		// A negative count is not priced: it would lower a total.
		{"claude-opus-4-8", Tokens{Input: -6600, Output: 180}, 0, false},
		{"gpt-5", Tokens{Output: -1}, 0, false},
		{"gpt-5", Tokens{CachedInput: -1}, 0, false},
		{"gpt-5", Tokens{CacheWrite: -1}, 0, false},
	} {
		got, ok := Cost(c.model, c.tokens)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cost(%q, %+v) = %v, %v; want %v, %v", c.model, c.tokens, got, ok, c.want, c.ok)
		}
	}
}
