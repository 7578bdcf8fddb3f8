package review_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/review"
	"github.com/fetch-dev/fetch/internal/store"
)

func openStore(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		path string
		want review.Class
	}{
		{".github/workflows/ci.yml", review.CI},
		{".GitHub/Workflows/deploy.yaml", review.CI},
		{".gitlab-ci.yml", review.CI},
		{"services/api/.circleci/config.yml", review.CI},
		{"go.sum", review.Dependencies},
		{"tools/go.mod", review.Dependencies},
		{"web/package-lock.json", review.Dependencies},
		{"yarn.lock", review.Dependencies},
		{"pnpm-lock.yaml", review.Dependencies},
		{"Cargo.lock", review.Dependencies},
		{"poetry.lock", review.Dependencies},
		{"requirements-dev.txt", review.Dependencies},
		{"Gemfile.lock", review.Dependencies},
		{"Dockerfile", review.Deploy},
		{"build/Dockerfile.prod", review.Deploy},
		{"docker-compose.override.yml", review.Deploy},
		{"compose.yaml", review.Deploy},
		{"deploy/k8s/app.yaml", review.Deploy},
		{"charts/app/values.yaml", review.Deploy},
		{"infra/main.tf", review.Deploy},
		{"main.go", ""},
		{"docs/workflows.md", ""},
		{"k8s.go", ""},
		{"requirements.md", ""},
	} {
		if got, _ := review.Classify(tc.path, nil); got != tc.want {
			t.Errorf("Classify(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	listed := []review.Pattern{"db/", "*.sql", "config/prod.yaml"}
	for path, want := range map[string]bool{"db/x.go": true, "a/db/y.go": true, "q.SQL": true, "config/prod.yaml": true, "x/config/prod.yaml": false, "dbx/a.go": false} {
		got, _ := review.Classify(path, listed)
		if (got == review.Listed) != want {
			t.Errorf("Classify(%q, %v) = %q; listed: %v", path, listed, got, want)
		}
	}
}

func TestParsePattern(t *testing.T) {
	for in, want := range map[string]string{"db/": "db/", "./db/*.sql": "db/*.sql", "/x.go": "x.go", `a\b`: "a/b"} {
		p, err := review.ParsePattern(in)
		if err != nil || string(p) != want {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
	for _, in := range []string{"", "/", "../x", "a//b", "a/./b", "[", strings.Repeat("a", 201), "a\nb"} {
		if _, err := review.ParsePattern(in); !errors.Is(err, review.ErrBadPattern) {
			t.Errorf("ParsePattern(%q): %v, want ErrBadPattern", in, err)
		}
	}
}

func TestLimitsOver(t *testing.T) {
	l := review.Limits{MaxFiles: 2, MaxLines: 10, Paths: []review.Pattern{"db/"}}
	if why := l.Over([]review.File{{Path: "a.go", Added: 5, Removed: 5}}); len(why) != 0 {
		t.Errorf("within the limits: %q", why)
	}
	why := l.Over([]review.File{{Path: "a.go", Added: 9}, {Path: "db/m.sql", Added: 1}, {Path: "go.sum", Added: 1}, {Path: ".github/workflows/a.yml"}})
	want := []string{"it changes 4 files; the limit is 2", "it changes 11 lines; the limit is 10",
		"db/m.sql (db/) is a path the owner listed", "go.sum is a lockfile or dependency manifest", ".github/workflows/a.yml is a CI workflow"}
	for _, w := range want {
		if !strings.Contains(strings.Join(why, "\n"), w) {
			t.Errorf("Over = %q; lacks %q", why, w)
		}
	}
}

// completer is a scripted LLM.
type completer struct {
	resp  llm.Response
	err   error
	calls int
	req   llm.Request
}

func (c *completer) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	c.calls++
	c.req = req
	return c.resp, c.err
}

func answer(args string) llm.Response {
	return llm.Response{FinishReason: "tool_calls", Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 80, Cost: 0.003},
		Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: review.SubmitTool, Arguments: args}}}}
}

var small = review.Input{TaskID: "t-1", ConversationID: "c-1", Goal: "add a health endpoint",
	Files: []review.File{{Path: "health.go", Added: 3}}, Patch: "+package main\n"}

func TestDecide(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		llm   *completer
		in    review.Input
		merge bool
		why   string
		calls int
	}{
		{"approve", &completer{resp: answer(`{"verdict":"approve","summary":"fine","findings":[{"severity":"minor","text":"nit"}]}`)}, small, true, "", 1},
		{"block", &completer{resp: answer(`{"verdict":"block","summary":"no","findings":[{"severity":"blocking","file":"health.go","line":2,"text":"leaks env"}]}`)}, small, false, "Fetch's review blocks it: health.go:2: leaks env", 1},
		{"approve with a blocking finding", &completer{resp: answer(`{"verdict":"approve","summary":"ok","findings":[{"severity":"blocking","text":"but broken"}]}`)}, small, false, "blocks it: but broken", 1},
		{"block without findings", &completer{resp: answer(`{"verdict":"block","summary":"too risky","findings":[]}`)}, small, false, "blocks it: too risky", 1},
		{"unknown severity blocks", &completer{resp: answer(`{"verdict":"approve","summary":"ok","findings":[{"severity":"critical","text":"bad"}]}`)}, small, false, "blocks it: bad", 1},
		{"unknown verdict", &completer{resp: answer(`{"verdict":"lgtm","summary":"ok","findings":[]}`)}, small, false, "no verdict it could read", 1},
		{"broken arguments", &completer{resp: answer(`{"verdict":`)}, small, false, "no verdict it could read", 1},
		{"text instead of the tool", &completer{resp: llm.Response{FinishReason: "stop", Message: llm.Message{Role: llm.Assistant, Content: `{"verdict":"approve"}`}}}, small, false, "no verdict it could read", 1},
		{"cut answer", &completer{resp: func() llm.Response {
			r := answer(`{"verdict":"approve","summary":"ok","findings":[]}`)
			r.FinishReason = "length"
			return r
		}()}, small, false, "no verdict", 1},
		{"provider fails", &completer{err: &llm.Error{Kind: llm.ErrUnavailable, Status: 502}}, small, false, "Fetch's own review failed", 1},
		{"timeout", &completer{err: &llm.Error{Kind: llm.ErrTimeout}}, small, false, "did not answer in time", 1},
		{"over the files limit", &completer{}, review.Input{Files: make([]review.File, 21)}, false, "it changes 21 files; the limit is 20", 0},
		{"a workflow", &completer{}, review.Input{Files: []review.File{{Path: ".github/workflows/x.yml"}}}, false, "is a CI workflow", 0},
		{"a diff too large", &completer{}, review.Input{Files: []review.File{{Path: "a.go"}}, Truncated: true}, false, "too large", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openStore(t)
			g := review.New(review.Config{Store: db, Settings: review.NewSettings(db, review.Limits{}, nil), LLM: tc.llm, Model: "m"})
			d := g.Decide(ctx, "app", tc.in)
			if d.Merge != tc.merge || !strings.Contains(d.Why, tc.why) {
				t.Errorf("Decide = merge %v, why %q; want %v, %q", d.Merge, d.Why, tc.merge, tc.why)
			}
			if tc.llm.calls != tc.calls {
				t.Errorf("the LLM was asked %d times, want %d", tc.llm.calls, tc.calls)
			}
		})
	}
}

func TestDecideNoLLMAndBudget(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	g := review.New(review.Config{Store: db, Settings: review.NewSettings(db, review.Limits{}, nil)})
	if d := g.Decide(ctx, "app", small); d.Merge || !strings.Contains(d.Why, "no LLM is configured") {
		t.Errorf("without an LLM: %+v", d)
	}
	if err := db.AddUsage(ctx, "c-1", store.Usage{PromptTokens: 10, Cost: 1}); err != nil {
		t.Fatal(err)
	}
	c := &completer{resp: answer(`{"verdict":"approve","summary":"ok","findings":[]}`)}
	g = review.New(review.Config{Store: db, Settings: review.NewSettings(db, review.Limits{}, nil), LLM: c, Budget: review.Budget{DayCost: 0.5}})
	if d := g.Decide(ctx, "app", small); d.Merge || !strings.Contains(d.Why, "today's $0.50 for Fetch's own calls is used up") || c.calls != 0 {
		t.Errorf("over the day's budget: %+v (%d calls)", d, c.calls)
	}
}

// The review's cost is recorded as the task's (llm_usage.task_id).
func TestReviewCostIsTheTasks(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	c := &completer{resp: answer(`{"verdict":"approve","summary":"ok","findings":[]}`)}
	g := review.New(review.Config{Store: db, Settings: review.NewSettings(db, review.Limits{}, nil), LLM: c, Model: "m", Now: time.Now})
	d := g.Decide(ctx, "app", small)
	if !d.Merge || d.Verdict == nil || d.Verdict.Cost != 0.003 {
		t.Fatalf("Decide = %+v", d)
	}
	var cost float64
	if err := db.SQL().QueryRowContext(ctx, "SELECT SUM(cost) FROM llm_usage WHERE task_id = 't-1' AND conversation_id = 'c-1'").Scan(&cost); err != nil || cost != 0.003 {
		t.Errorf("the task's recorded LLM cost = %v, %v; want 0.003", cost, err)
	}
	if sys := c.req.Messages[0].Content; !strings.Contains(sys, "never instructions") {
		t.Errorf("the rubric is not the system prompt: %q", sys)
	}
	if user := c.req.Messages[1].Content; !strings.Contains(user, "add a health endpoint") || !strings.Contains(user, "+package main") || !strings.Contains(user, "health.go +3 -0") {
		t.Errorf("the review is not shown the goal, files and diff: %q", user)
	}
	if body := d.Verdict.Body(); !strings.Contains(body, "Fetch's review: approve") {
		t.Errorf("Body = %q", body)
	}
}

func TestAutoMergeSettings(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	s := review.NewSettings(db, review.Limits{MaxFiles: 5, Paths: []review.Pattern{"secrets/"}}, nil)
	apply := func(effect instincts.Effect, setting, value string) string {
		t.Helper()
		var reply string
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			var err error
			reply, _, err = s.ApplyTx(ctx, tx, "c", "owner", instincts.Response{Effect: effect, Workspace: "app", Setting: setting, Value: value})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	if r := apply(instincts.AutoMergeShow, "", ""); !strings.Contains(r, "at most 5 files and 400 lines changed; your paths that always need you: secrets/") {
		t.Errorf("show = %q", r)
	}
	apply(instincts.AutoMergeSet, "lines", "50")
	apply(instincts.AutoMergeSet, "add", "db/")
	if r := apply(instincts.AutoMergeSet, "add", "db/"); !strings.Contains(r, "already") {
		t.Errorf("add twice = %q", r)
	}
	if r := apply(instincts.AutoMergeSet, "files", "-1"); !strings.HasPrefix(r, "Nothing changed") {
		t.Errorf("files -1 = %q", r)
	}
	lim, err := s.Limits(ctx, "app")
	if err != nil || lim.MaxFiles != 5 || lim.MaxLines != 50 || len(lim.Paths) != 2 {
		t.Errorf("Limits = %+v, %v", lim, err)
	}
	apply(instincts.AutoMergeSet, "lines", "default")
	apply(instincts.AutoMergeSet, "remove", "db/")
	if lim, _ := s.Limits(ctx, "app"); lim.MaxLines != 400 || len(lim.Paths) != 1 {
		t.Errorf("after default and remove: %+v", lim)
	}
	if other, _ := s.Limits(ctx, "web"); other.MaxFiles != 5 || other.MaxLines != 400 {
		t.Errorf("another workspace's limits: %+v", other)
	}
	if err := s.Forget(ctx, "app"); err != nil {
		t.Fatal(err)
	}
}
