package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/price"
)

// TestPriceFile: FETCH_PRICES extends the price table Fetch uses; a file
// with a malformed line is refused at start, naming the file and line,
// and nothing starts.
func TestPriceFile(t *testing.T) {
	t.Cleanup(func() { price.Use(price.Builtin()) })
	dir := t.TempDir()
	good := filepath.Join(dir, "prices")
	if err := os.WriteFile(good, []byte("# mine\nclaude-sonnet-4-5 3 15 0.3 3.75 2025-09-29 https://docs.anthropic.com/en/docs/about-claude/pricing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/h", "FETCH_PRICES": good}))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := cfg.Prices.Lookup("claude-sonnet-4-5-20250929"); !ok || p.Fallback || p.Output != 15 {
		t.Errorf("the file's price: %+v, %v", p, ok)
	}
	if p, ok := price.Of("claude-sonnet-4-5-20250929"); !ok || p.Fallback || p.Output != 15 {
		t.Errorf("the table in use lacks the file's price: %+v, %v", p, ok)
	}

	if _, ok := price.Of("qwen3-coder-plus"); ok {
		t.Errorf("without a budget a model of no known provider has a price")
	}
	if _, err := loadConfig(envOf(map[string]string{"HOME": "/h", "FETCH_PRICES": good, "FETCH_TASK_BUDGET_USD": "1"})); err != nil {
		t.Fatal(err)
	}
	if p, ok := price.Of("qwen3-coder-plus"); !ok || !p.Fallback || p.Model != "claude-opus-4-8" {
		t.Errorf("with a task budget a model of no known provider is priced %+v, %v; want as claude-opus-4-8, the dearest", p, ok)
	}

	bad := filepath.Join(dir, "bad-prices")
	if err := os.WriteFile(bad, []byte("# mine\nclaude-sonnet-4-5 3 15 0.3 3.75 2025-09-29 docs\nclaude-opus-4-1 15 seventy-five 1.5 18.75 2025-08-05 docs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	code, _, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": data, "FETCH_PRICES": bad}, "", "serve")
	if code == 0 || !strings.Contains(errs, "FETCH_PRICES: "+bad+":3: ") || !strings.Contains(errs, `"seventy-five"`) {
		t.Errorf("fetch serve with a malformed price file: exit %d, said %q; want refused naming %s:3", code, errs, bad)
	}
	if _, err := os.Stat(filepath.Join(data, "fetch.db")); err == nil {
		t.Errorf("fetch serve opened its database despite the malformed price file")
	}
}
