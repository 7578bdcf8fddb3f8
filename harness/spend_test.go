package harness

import (
	"bytes"
	"math"
	"testing"
)

// TestClaudeSpendGrows: Claude Code's assistant messages carry usage while
// the run goes on (claude-task.jsonl); each new message id raises the
// spend, priced by the message's model, and the result's total_cost_usd
// is the run's usage.
func TestClaudeSpendGrows(t *testing.T) {
	g := replay(ClaudeAdapter{}, loadTranscript(t, "claude-task.jsonl"))
	var spends []float64
	for _, ev := range g.Events {
		if ev.Kind == KindSpend {
			if !ev.Usage.CostEstimated {
				t.Fatalf("spend %+v not marked estimated", ev.Usage)
			}
			spends = append(spends, ev.Usage.CostUSD)
		}
	}
	if len(spends) != 4 {
		t.Fatalf("spend events %v, want one per assistant message (4)", spends)
	}
	for i := 1; i < len(spends); i++ {
		if spends[i] <= spends[i-1] {
			t.Fatalf("spend did not grow: %v", spends)
		}
	}
	if u := g.Outcome.Usage; u.CostUSD != 0.0375 || u.CostEstimated || u.CostUnknown {
		t.Fatalf("outcome usage %+v, want the result's 0.0375 as reported", u)
	}
	if spends[3] > 0.0375 {
		t.Fatalf("last spend %v above the result's cost", spends[3])
	}
}

// TestTokensPriced: a CLI that reports tokens only is priced by its model
// when the table knows it, and says the cost is unknown otherwise.
func TestTokensPriced(t *testing.T) {
	tr := loadTranscript(t, "codex-task.jsonl")
	known := replayAs(CodexAdapter{}, tr, Task{Model: "gpt-5"}).Outcome.Usage
	if !known.CostEstimated || known.CostUnknown || known.CostUSD <= 0 {
		t.Fatalf("codex with gpt-5: %+v, want an estimated cost", known)
	}
	// OpenAI counts cached tokens inside input_tokens.
	want := (float64(known.InputTokens-known.CacheReadTokens)*1.25 + float64(known.CacheReadTokens)*0.125 + float64(known.OutputTokens)*10) / 1e6
	if math.Abs(known.CostUSD-want) > 1e-12 {
		t.Fatalf("codex cost %v, want %v", known.CostUSD, want)
	}
	dflt := replayAs(CodexAdapter{}, tr, Task{}).Outcome.Usage
	if dflt.CostUnknown || dflt.CostUSD != known.CostUSD || dflt.PricedAs != "gpt-5" {
		t.Fatalf("codex with its default model: %+v, want priced as OpenAI's dearest (gpt-5), marked", dflt)
	}
	gem := replay(GeminiAdapter{}, loadTranscript(t, "gemini-task.jsonl")).Outcome.Usage
	if gem.CostUnknown || gem.CostUSD <= 0 || !gem.CostEstimated || gem.PricedAs != "gemini-2.5-pro" {
		t.Fatalf("gemini 3.x models: %+v, want priced as the dearest Gemini model in the table, marked", gem)
	}
	qwen := replayAs(CodexAdapter{}, tr, Task{Model: "qwen3-coder-plus"}).Outcome.Usage
	if !qwen.CostUnknown || qwen.CostUSD != 0 || qwen.PricedAs != "" {
		t.Fatalf("a model of no known provider: %+v, want cost unknown", qwen)
	}
}

// TestClaudeUnpricedModelSpend: Claude Code naming a model the table
// lacks (claude-sonnet-4-5-20250929, Sonnet 4.5's id) is priced while it
// runs as the dearest Anthropic model, and the spend says so.
func TestClaudeUnpricedModelSpend(t *testing.T) {
	tr := loadTranscript(t, "claude-task.jsonl")
	replaced := false
	for i, line := range tr.stdout {
		if bytes.Contains(line, []byte(`"model":"claude-opus-4-8"`)) {
			tr.stdout[i] = bytes.ReplaceAll(line, []byte(`"model":"claude-opus-4-8"`), []byte(`"model":"claude-sonnet-4-5-20250929"`))
			replaced = true
		}
	}
	if !replaced {
		t.Fatal("the transcript names no model to replace")
	}
	g := replay(ClaudeAdapter{}, tr)
	n := 0
	for _, ev := range g.Events {
		if ev.Kind == KindSpend {
			n++
			if u := ev.Usage; !u.CostEstimated || u.CostUSD <= 0 || u.PricedAs != "claude-opus-4-8" {
				t.Fatalf("spend %+v; want priced as claude-opus-4-8, marked", u)
			}
		}
	}
	if n == 0 {
		t.Fatal("no spend events")
	}
}
