package instincts_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
)

func TestAutonomy(t *testing.T) {
	s := instincts.New()
	for _, tc := range []struct {
		text     string
		role     string
		current  instincts.Autonomy
		effect   instincts.Effect
		level    instincts.Autonomy
		contains string
	}{
		{"/autonomy", "owner", "", instincts.None, "", "Autonomy: cautious."},
		{"/autonomy", "owner", instincts.Autonomous, instincts.None, "", "Autonomy: autonomous."},
		{"/autonomy Autonomous", "owner", "", instincts.SetAutonomy, instincts.Autonomous, "routine confirmations"},
		{"/autonomy supervised", "owner", instincts.Autonomous, instincts.SetAutonomy, instincts.Supervised, "before every task"},
		{"/autonomy yolo", "owner", "", instincts.None, "", `"yolo" is not a level`},
		{"/autonomy autonomous", "allowed", "", instincts.None, "", "Only the owner"},
	} {
		st := idle()
		st.Role, st.Autonomy = tc.role, tc.current
		r, ok := s.Match(tc.text, st)
		if !ok || r.Effect != tc.effect || r.Autonomy != tc.level || !strings.Contains(r.Reply, tc.contains) {
			t.Errorf("%q as %s: %+v; want effect %q level %q and %q", tc.text, tc.role, r, tc.effect, tc.level, tc.contains)
		}
		again, _ := s.Match(tc.text, st)
		if again != r {
			t.Errorf("%q: not deterministic", tc.text)
		}
	}
}

func TestStatusShowsSpend(t *testing.T) {
	st := idle()
	st.Spend = &instincts.Spend{Tokens: 12345, Cost: 0.0421, CostBudget: 5}
	r, _ := instincts.New().Match("/status", st)
	if !strings.Contains(r.Reply, "Today: 12345 tokens, $0.0421 of $5.00") {
		t.Fatalf("status %q", r.Reply)
	}
	st.Spend = nil
	if r, _ := instincts.New().Match("/status", st); strings.Contains(r.Reply, "Today") {
		t.Fatalf("status without a spend shows one: %q", r.Reply)
	}
}
