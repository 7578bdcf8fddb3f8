package harness

import (
	"math"
	"strconv"
	"testing"
)

func TestUsageValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    Usage
		want bool
	}{
		{"zero", Usage{}, true},
		{"ordinary", Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.01, PremiumRequests: 1}, true},
		{"negative cost", Usage{CostUSD: -0.5}, false},
		{"NaN cost", Usage{CostUSD: math.NaN()}, false},
		{"infinite cost", Usage{CostUSD: math.Inf(1)}, false},
		{"minus infinite cost", Usage{CostUSD: math.Inf(-1)}, false},
		{"negative input tokens", Usage{InputTokens: -1}, false},
		{"negative output tokens", Usage{OutputTokens: -1}, false},
		{"negative cache read", Usage{CacheReadTokens: -1}, false},
		{"negative cache write", Usage{CacheWriteTokens: -1}, false},
		{"negative premium requests", Usage{PremiumRequests: -1}, false},
		{"NaN premium requests", Usage{PremiumRequests: math.NaN()}, false},
	} {
		if got := tc.u.Valid(); got != tc.want {
			t.Errorf("%s: Valid() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNegativeCostIsNotAdded: a step that reports a negative cost (or
// negative tokens) does not lower the run's usage: the outcome sums the
// valid reports only. The event still reaches the engine, which logs and
// drops it (internal/task).
func TestNegativeCostIsNotAdded(t *testing.T) {
	step := func(input, output int, cost string) []byte {
		return []byte(`{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":` +
			strconv.Itoa(input) + `,"output":` + strconv.Itoa(output) + `,"cache":{"write":0,"read":0}},"cost":` + cost + `}}`)
	}
	tr := transcript{name: "opencode-negative", exitCode: 0, stdout: [][]byte{
		step(1000, 50, "0.5"),
		step(10, 1, "-0.4"),
		step(-5000, 1, "0.1"),
		step(100, 5, "0.25"),
	}}
	u := replayAs(OpenCodeAdapter{}, tr, Task{}).Outcome.Usage
	if u.CostUSD != 0.75 || u.InputTokens != 1100 || u.OutputTokens != 55 {
		t.Fatalf("outcome usage %+v; want the two valid steps only ($0.75, 1100 in, 55 out)", u)
	}
}
