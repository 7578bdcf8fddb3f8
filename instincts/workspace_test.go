package instincts_test

import (
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/instincts"
)

func TestUse(t *testing.T) {
	set := instincts.New()
	for _, tc := range []struct {
		text  string
		st    instincts.State
		fx    instincts.Effect
		ws    string
		reply string
	}{
		{"/use demo", idle(), instincts.UseWorkspace, "demo", ""},
		{"/USE api", idle(), instincts.UseWorkspace, "api", ""},
		{"/use", idle(), instincts.UseWorkspace, "", ""},
		{"/use web", working(), instincts.UseWorkspace, "web", "Task t-7 keeps running in api."},
		{"/use ../etc", idle(), instincts.None, "", `"../etc" is not a workspace name`},
		{"/use a b", idle(), instincts.None, "", "Usage: /use WORKSPACE"},
	} {
		r, ok := set.Match(tc.text, tc.st)
		if !ok || r.Instinct != "use" || r.Effect != tc.fx || r.Workspace != tc.ws || !strings.Contains(r.Reply, tc.reply) || tc.reply == "" && r.Reply != "" {
			t.Errorf("%q → %+v; want effect %q, workspace %q, reply %q", tc.text, r, tc.fx, tc.ws, tc.reply)
		}
	}
}

func TestAllow(t *testing.T) {
	set := instincts.New()
	friend := idle()
	friend.UserID, friend.Role = "222", "allowed"
	for _, tc := range []struct {
		text  string
		st    instincts.State
		fx    instincts.Effect
		user  string
		reply string
	}{
		{"/allow add 100000000000000002", idle(), instincts.AllowAdd, "100000000000000002", ""},
		{"/allow add <@!42>", idle(), instincts.AllowAdd, "42", ""},
		{"/allow remove 42", idle(), instincts.AllowRemove, "42", ""},
		{"/allow list", idle(), instincts.AllowList, "", ""},
		{"/allow", idle(), instincts.AllowList, "", ""},
		{"/allow add bob", idle(), instincts.None, "", `"bob" is not a Discord user id`},
		{"/allow add 1234567890123456789012", idle(), instincts.None, "", "is not a Discord user id"},
		{"/allow add owner-1", idle(), instincts.None, "", "is not a Discord user id"},
		{"/allow add", idle(), instincts.None, "", "Usage: /allow add USER_ID"},
		{"/allow frob 42", idle(), instincts.None, "", "Usage: /allow add USER_ID"},
		{"/allow add 42", friend, instincts.None, "", "Only the owner can manage who may talk to me."},
		{"/allow list", friend, instincts.None, "", "Only the owner"},
		{"/allow remove 222", func() instincts.State { s := idle(); s.UserID = "222"; return s }(), instincts.None, "", "the owner may always talk to me"},
	} {
		r, ok := set.Match(tc.text, tc.st)
		if !ok || r.Instinct != "allow" || r.Effect != tc.fx || r.User != tc.user || !strings.Contains(r.Reply, tc.reply) || tc.reply == "" && r.Reply != "" {
			t.Errorf("%q → %+v; want effect %q, user %q, reply %q", tc.text, r, tc.fx, tc.user, tc.reply)
		}
	}
}

func TestStatusShowsWhatChangesBehaviour(t *testing.T) {
	set := instincts.New()
	st := working()
	st.Autonomy = instincts.Supervised
	st.LLM = true
	st.Prompt = &instincts.Prompt{Kind: instincts.Approval, Body: "Delete workspace old"}
	st.Spend = &instincts.Spend{Tokens: 1200, Cost: 0.5, TokenBudget: 10000, CostBudget: 2, TurnTokens: 3000}
	r, _ := set.Match("/status", st)
	for _, want := range []string{
		"Workspace: api\n",
		"Autonomy: supervised\n",
		"Waiting for your approval: Delete workspace old\n",
		"Today: 1200 tokens, $0.5000 of 10000 tokens / $2.00; left today: 8800 tokens / $1.50; per request at most 3000 tokens",
	} {
		if !strings.Contains(r.Reply+"\n", want) {
			t.Errorf("/status:\n%s\nwant %q", r.Reply, want)
		}
	}
	st.Spend = &instincts.Spend{Tokens: 12}
	st.Prompt = nil
	r, _ = set.Match("/status", st)
	if !strings.Contains(r.Reply, "Today: 12 tokens, $0.0000; no daily budget") || !strings.Contains(r.Reply, "Waiting for your approval or answer: nothing") || strings.Contains(r.Reply, "LLM: none") {
		t.Errorf("/status without budgets:\n%s", r.Reply)
	}
}

func TestStatusShowsTheDaysSpend(t *testing.T) {
	set := instincts.New()
	st := working()
	for _, tc := range []struct {
		spend instincts.DaySpend
		want  string
	}{
		{instincts.DaySpend{USD: 0.25}, "Spent today (coding CLIs and Fetch's own calls): $0.2500; no daily budget for tasks"},
		{instincts.DaySpend{USD: 0.25, Budget: 1}, "Spent today (coding CLIs and Fetch's own calls): $0.2500 of $1.00 a day; $0.75 left for tasks"},
		{instincts.DaySpend{USD: 1.5, Budget: 1}, "Spent today (coding CLIs and Fetch's own calls): $1.5000, over the daily budget of $1.00: a new task asks you first"},
	} {
		st.DaySpend = &tc.spend
		r, _ := set.Match("/status", st)
		if !strings.Contains(r.Reply, tc.want) {
			t.Errorf("/status with %+v:\n%s\nwant %q", tc.spend, r.Reply, tc.want)
		}
	}
	// Nothing spent and no budget: nothing to say.
	st.DaySpend = &instincts.DaySpend{}
	if r, _ := set.Match("/status", st); strings.Contains(r.Reply, "Spent today") {
		t.Errorf("/status with nothing spent and no budget:\n%s", r.Reply)
	}
}
