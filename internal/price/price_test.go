package price

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCost(t *testing.T) {
	for _, c := range []struct {
		model    string
		tokens   Tokens
		want     float64
		ok       bool
		fallback bool
		as       string
	}{
		// claude-task.jsonl: result total_cost_usd 0.0375 for 6600 in, 180 out.
		{"claude-opus-4-8", Tokens{Input: 6600, Output: 180}, 0.0375, true, false, "claude-opus-4-8"},
		{"claude-opus-4-8[1m]", Tokens{Input: 6600, Output: 180}, 0.0375, true, false, "claude-opus-4-8"},
		// A pinned date is priced by its family.
		{"claude-haiku-4-5-20251001", Tokens{Input: 1e6, CachedInput: 1e6, CacheWrite: 1e6, Output: 1e6}, 1 + 0.1 + 1.25 + 5, true, false, "claude-haiku-4-5"},
		{"openai/gpt-5", Tokens{Input: 1e6, CachedInput: 1e6, CacheWrite: 1e6, Output: 1e6}, 1.25 + 0.125 + 1.25 + 10, true, false, "gpt-5"},
		{"gpt-5-2025-08-07", Tokens{Output: 1e6}, 10, true, false, "gpt-5"},
		// A model of a known provider without a price of its own: the
		// provider's dearest, marked.
		{"claude-sonnet-4-5-20250929", Tokens{Input: 2000, Output: 100}, 0.0125, true, true, "claude-opus-4-8"},
		{"claude-opus-4-1-20250805", Tokens{Output: 1e6}, 25, true, true, "claude-opus-4-8"},
		{"anthropic/claude-sonnet-4.5", Tokens{Output: 1e6}, 25, true, true, "claude-opus-4-8"},
		{"gpt-5.5-codex", Tokens{Output: 1e6}, 10, true, true, "gpt-5"},
		{"o3", Tokens{Output: 1e6}, 10, true, true, "gpt-5"},
		{"gemini-3-pro", Tokens{Output: 1e6}, 10, true, true, "gemini-2.5-pro"},
		{"openai/", Tokens{Output: 1e6}, 10, true, true, "gpt-5"},
		// No known provider: no price.
		{"some-new-model", Tokens{Input: 1000}, 0, false, false, ""},
		{"qwen3-coder-plus", Tokens{Input: 1000}, 0, false, false, ""},
		{"", Tokens{Input: 1000}, 0, false, false, ""},
		// A negative count is not priced: it would lower a total.
		{"claude-opus-4-8", Tokens{Input: -6600, Output: 180}, 0, false, false, ""},
		{"gpt-5", Tokens{Output: -1}, 0, false, false, ""},
		{"gpt-5", Tokens{CachedInput: -1}, 0, false, false, ""},
		{"gpt-5", Tokens{CacheWrite: -1}, 0, false, false, ""},
	} {
		got, p, ok := Cost(c.model, c.tokens)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cost(%q, %+v) = %v, %v; want %v, %v", c.model, c.tokens, got, ok, c.want, c.ok)
		}
		if ok && (p.Fallback != c.fallback || p.Model != c.as || p.Source == "" || p.Date == "") {
			t.Errorf("Cost(%q) priced as %+v; want %s (fallback %v) with its source and date", c.model, p, c.as, c.fallback)
		}
	}
}

// An exact entry wins over its family's; a dated id without an entry of
// its own takes the family's.
func TestLookupExactFirst(t *testing.T) {
	tab := Builtin().With(Entry{Model: "gpt-5-2025-08-07", Rates: Rates{Input: 9, Output: 99}, Source: "test", Date: "2026-01-01"})
	if p, ok := tab.Lookup("gpt-5-2025-08-07"); !ok || p.Output != 99 || p.Fallback {
		t.Errorf("exact dated entry: %+v, %v", p, ok)
	}
	if p, ok := tab.Lookup("gpt-5-2025-09-09"); !ok || p.Output != 10 || p.Fallback {
		t.Errorf("dated id of a known family: %+v, %v", p, ok)
	}
	// A dearer owner entry becomes the provider's fallback.
	if p, ok := tab.Lookup("gpt-7"); !ok || p.Model != "gpt-5-2025-08-07" || !p.Fallback {
		t.Errorf("fallback with the owner's dearer entry: %+v, %v", p, ok)
	}
}

// With a budget to keep, a model of no known provider, or no model, is
// priced as the dearest of all, marked; without, it has no price.
func TestPricingUnknown(t *testing.T) {
	tab := Builtin().PricingUnknown().With(Entry{Model: "qwen3-coder-plus", Rates: Rates{Input: 1, Output: 5}, Source: "test", Date: "2026-01-01"})
	for _, m := range []string{"some-new-model", ""} {
		if p, ok := tab.Lookup(m); !ok || !p.Fallback || p.Model != "claude-opus-4-8" {
			t.Errorf("Lookup(%q) with PricingUnknown = %+v, %v; want claude-opus-4-8, fallback", m, p, ok)
		}
		if p, ok := Builtin().Lookup(m); ok {
			t.Errorf("Lookup(%q) without PricingUnknown = %+v; want no price", m, p)
		}
	}
	if p, ok := tab.Lookup("qwen3-coder-plus"); !ok || p.Fallback || p.Output != 5 {
		t.Errorf("an entry of its own still wins: %+v, %v", p, ok)
	}
	if p, ok := tab.Lookup("gpt-7"); !ok || p.Model != "gpt-5" {
		t.Errorf("a known provider's model is priced by its provider: %+v, %v", p, ok)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices")
	text := `# the owner's prices
claude-sonnet-4-5   3  15  0.30 3.75  2025-09-29  https://docs.anthropic.com/en/docs/about-claude/pricing (read by hand)

qwen3-coder-plus    1  5   0.1  0     2025-10     Alibaba Cloud Model Studio
claude-opus-4-8     4  20  0.4  5     2026-12-01  renegotiated
`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tab, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := tab.Lookup("claude-sonnet-4-5-20250929")
	if !ok || p.Fallback || p.Input != 3 || p.Output != 15 || p.CacheWrite != 3.75 || p.Date != "2025-09-29" || p.Source != "https://docs.anthropic.com/en/docs/about-claude/pricing (read by hand)" {
		t.Errorf("sonnet 4.5 from the file: %+v, %v", p, ok)
	}
	if usd, ok := (Price{Entry: Entry{Rates: Rates{Input: 1}}}).Cost(Tokens{CacheWrite: 1e6}); !ok || usd != 1 {
		t.Errorf("a zero cache-write price costs as input: %v", usd)
	}
	if p, ok := tab.Lookup("qwen3-coder-plus"); !ok || p.Output != 5 || p.Fallback {
		t.Errorf("qwen from the file: %+v, %v", p, ok)
	}
	if p, ok := tab.Lookup("claude-opus-4-8"); !ok || p.Output != 20 || p.Source != "renegotiated" {
		t.Errorf("the file overrides the built-in price: %+v, %v", p, ok)
	}
	if p, ok := Builtin().Lookup("claude-opus-4-8"); !ok || p.Output != 25 {
		t.Errorf("the built-in table changed: %+v", p)
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for _, bad := range []string{
		"claude-x 3 15 0.3 3.75 2025-09-29",           // no source
		"claude-x 3 fifteen 0.3 3.75 2025-09-29 docs", // not a number
		"claude-x 3 -15 0.3 3.75 2025-09-29 docs",     // negative
		"claude-x 3 NaN 0.3 3.75 2025-09-29 docs",     // not a number of dollars
		"claude-x 3 15 0.3 3.75 29.09.2025 docs",      // not a date
		"claude-x 3 15 0.3 3.75 2025-13-01 docs",      // no such month
		"$(rm -rf) 3 15 0.3 3.75 2025-09-29 docs",     // not a model name
		"claude-x 3 15 0.3 2025-09-29 docs and more",  // a field missing
	} {
		text := "# ok\nclaude-y 1 5 0.1 1.25 2025-10 fine\n\n" + bad + "\n"
		_, err := Parse(strings.NewReader(text), "prices.txt")
		if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "prices.txt:4: ") {
			t.Errorf("Parse(%q) = %v; want ErrFormat naming prices.txt:4", bad, err)
		}
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file: %v", err)
	}
}
