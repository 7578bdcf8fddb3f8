package ship_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/review"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/store"
)

// verdicts is a scripted LLM that answers every review with the verdict
// it holds, and remembers what it was shown.
type verdicts struct {
	args  string
	shown []string
}

func (v *verdicts) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	v.shown = append(v.shown, req.Messages[len(req.Messages)-1].Content)
	return llm.Response{FinishReason: "tool_calls", Usage: llm.Usage{Cost: 0.001},
		Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: review.SubmitTool, Arguments: v.args}}}}, nil
}

// In an autonomous workspace with the owner's autonomy at autonomous, a
// pull request whose review blocks stays open with why, the review posted
// on it; shipped again once the review approves, it is merged, the second
// review on it too.
func TestAutonomousMergeFollowsTheReview(t *testing.T) {
	llmv := &verdicts{args: `{"verdict":"block","summary":"no","findings":[{"severity":"blocking","file":"hello.txt","line":1,"text":"says hello to no one"}]}`}
	gate := &lateGate{}
	w := newWorldWith(t, worldOptions{gate: gate})
	db := w.db
	gate.g = review.New(review.Config{Store: db, Settings: review.NewSettings(db, review.Limits{}, nil), LLM: llmv, Model: "m"})
	ctx := context.Background()
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		return ship.SetModeTx(ctx, tx, "app", ship.Autonomous, store.FormatTime(time.Now()))
	}); err != nil {
		t.Fatal(err)
	}
	work := w.work()
	work.AutoMerge = true
	res, err := w.sh.Ship(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	if res.PR.State != "open" || !strings.Contains(res.PR.Held, "Fetch's review blocks it: hello.txt:1: says hello to no one") || res.Reviews != 1 {
		t.Fatalf("shipped with a blocking review: %+v", res)
	}
	if len(llmv.shown) != 1 || !strings.Contains(llmv.shown[0], "+hello") || !strings.Contains(llmv.shown[0], "Say hello") {
		t.Errorf("the review was not shown the diff and the goal: %q", llmv.shown)
	}
	rv := w.gh.Reviews("acme/app", res.PR.Number)
	if len(rv) != 1 || rv[0].State != "COMMENTED" || !strings.Contains(rv[0].Body, "says hello to no one") {
		t.Fatalf("reviews: %+v", rv)
	}
	llmv.args = `{"verdict":"approve","summary":"fine","findings":[]}`
	res, err = w.sh.Ship(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	if res.PR.State != "merged" || res.PR.Held != "" {
		t.Fatalf("shipped again with an approving review: %+v", res)
	}
	if prs := w.gh.PRs("acme/app"); len(prs) != 1 || !prs[0].Merged {
		t.Errorf("pull requests: %+v", prs)
	}
	if rv := w.gh.Reviews("acme/app", res.PR.Number); len(rv) != 2 || !strings.Contains(rv[1].Body, "Fetch's review: approve") {
		t.Errorf("reviews: %+v", rv)
	}
}

// lateGate is a Gate made once the world's store exists.
type lateGate struct{ g *review.Gate }

func (l *lateGate) Decide(ctx context.Context, ws string, in review.Input) review.Decision {
	return l.g.Decide(ctx, ws, in)
}
