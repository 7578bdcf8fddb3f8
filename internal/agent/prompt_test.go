package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/code"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/tokens"
	"github.com/fetch-dev/fetch/kennel"
)

// promptBudget is the most tokens the system prompt may cost with the
// default identity; it is sent with every request.
const promptBudget = 450

// fixedBudget is the most tokens the fixed part of an action's tool call
// (system prompt and tool definitions, as sent) may cost with the default
// identity and a small workspace's map: issue 13's target, which
// go run ./bench/tokens shows per call.
const fixedBudget = 1000

func TestFixedCostOfAnActionCall(t *testing.T) {
	r := newRig(t, func(r *rig, c *agent.Config) { c.Code = code.New(r.ws) })
	r.selectWorkspace("demo")
	dir, err := r.ws.Path("demo")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"main.go":   "package main\n\nfunc main() { Routes(nil) }\n",
		"routes.go": "package main\n\nimport \"net/http\"\n\n// Routes registers the handlers.\nfunc Routes(mux *http.ServeMux) {}\n\nfunc listUsers(w http.ResponseWriter, r *http.Request) {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.llm.Script(testkit.Say("ok"))
	r.say(intent.Action, "Add a GET /healthz endpoint that returns 200 and a test for it")
	req := r.llm.Requests()[0]
	sys := req.System()
	if !strings.Contains(sys, "func Routes") {
		t.Fatalf("the prompt lacks the workspace's map:\n%s", sys)
	}
	defs, err := json.Marshal(req.Body.Tools)
	if err != nil {
		t.Fatal(err)
	}
	n, m := tokens.Count(sys), tokens.Count(string(defs))
	t.Logf("system prompt %d tokens, %d tool definitions %d tokens", n, len(req.Body.Tools), m)
	if n+m > fixedBudget {
		t.Errorf("an action's call costs %d tokens before any history; keep it under %d", n+m, fixedBudget)
	}
}

// TestCacheBreakpointsOnEveryCall: for a model that caches only what is
// marked, every call of a turn marks the fixed part of the system prompt
// (identity, harness pack, code map — not the session part) and the
// turn's message; every call caps its answer, a tools call and the final
// answer each by their own limit. A model that caches by itself gets no
// marker.
func TestCacheBreakpointsOnEveryCall(t *testing.T) {
	for _, model := range []string{"anthropic/claude-sonnet-4.5", "openai/gpt-4.1"} {
		t.Run(model, func(t *testing.T) {
			r := newRig(t, func(r *rig, c *agent.Config) {
				client, err := llm.New(llm.Config{BaseURL: r.llm.URL(), APIKey: testkit.OpenRouterKey, Model: model, BaseDelay: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				c.LLM, c.Code = client, code.New(r.ws)
				c.MaxRounds = 1
				c.MaxTokens = agent.MaxTokens{Tools: 3000, Final: 700}
			})
			r.selectWorkspace("demo")
			r.llm.Script(
				testkit.Use(testkit.Call{ID: "c", Name: "workspace_list", Arguments: `{}`}),
				testkit.Say("You have demo."),
			)
			r.say(intent.Action, "list my workspaces and add a README")
			reqs := r.llm.Requests()
			if len(reqs) != 2 || !reqs[1].Final() {
				t.Fatalf("%d requests; want a tools call and a final answer", len(reqs))
			}
			for i, want := range []int{3000, 700} {
				if got := reqs[i].Body.MaxTokens; got != want {
					t.Errorf("request %d: max_tokens %d; want %d", i, got, want)
				}
			}
			for i, req := range reqs {
				bp := req.Breakpoints()
				if model == "openai/gpt-4.1" {
					if len(bp) != 0 {
						t.Errorf("request %d marks %d breakpoints for a model that caches by itself", i, len(bp))
					}
					continue
				}
				if len(bp) != 2 || bp[0].Role != "system" || bp[1].Role != "user" || bp[1].Upto != "list my workspaces and add a README" {
					t.Fatalf("request %d: breakpoints %+v; want the system prompt's fixed part and the turn's message", i, bp)
				}
				fixed, sys := bp[0].Upto, req.System()
				if !strings.HasPrefix(sys, fixed) || !strings.Contains(fixed, "# Harnesses for task_create") || strings.Contains(fixed, "# Now") || !strings.Contains(sys[len(fixed):], "# Now") {
					t.Errorf("request %d: the marked part is not the fixed part:\n%s\n---\n%s", i, fixed, sys[len(fixed):])
				}
				if i > 0 && fixed != reqs[0].Breakpoints()[0].Upto {
					t.Errorf("request %d: the fixed part changed within the turn", i)
				}
			}
		})
	}
}

func TestSystemPromptIsSmallAndCarriesTheIdentity(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ALPHA.md"), []byte("The owner is Ada Lovelace; she wants replies in French."), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := identity.New(dir, slog.New(slog.DiscardHandler))
	if err := ids.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer ids.Close(context.Background())
	// The git state comes from the workspace's kennel.
	k, err := kennel.New(testkit.RequireDocker(t), kennel.Config{Image: testkit.KennelImage(t), Instance: "agent-test-" + strconv.Itoa(os.Getpid())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(r *rig, c *agent.Config) {
		c.Identity = ids
		r.ws.InKennel(k)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			k.Remove(ctx, filepath.Join(r.ws.Root(), "demo"))
		})
	})
	r.selectWorkspace("demo")
	r.llm.Script(testkit.Say("ok"), testkit.Say("ok"), testkit.Say("ok"))
	// A turn starts no kennel: while demo's sleeps, the prompt names the
	// workspace without its git state.
	r.say(intent.Inquiry, "what does the parser do?")
	if sys := r.llm.Requests()[0].System(); !strings.Contains(sys, "Workspace: demo") || strings.Contains(sys, "last commit") {
		t.Errorf("system prompt while demo's kennel sleeps: want the workspace without its git state:\n%s", sys)
	}
	if _, err := k.Exec(t.Context(), kennel.ExecSpec{Workspace: filepath.Join(r.ws.Root(), "demo"), Argv: []string{"true"}, IfRunning: true}, nil); !errors.Is(err, kennel.ErrAsleep) {
		t.Fatalf("after a turn, demo's kennel: %v; want it still asleep", err)
	}
	// Once it runs, the prompt shows the state.
	if _, err := r.ws.Status(t.Context(), "demo"); err != nil {
		t.Fatal(err)
	}
	r.say(intent.Action, "fix the failing test in the parser")
	sys := r.llm.Requests()[1].System()
	for _, want := range []string{
		"Destructive actions",                          // a directive of COLLAR.md
		"Ada Lovelace",                                 // the owner profile (overlay)
		"claude: careful generalist",                   // the harness pack with routing hints
		"run the test suite before and after",          // the tests skill, triggered by "test"
		"Workspace: demo (on main, clean, last commit", // session context with git state
		"Autonomy: cautious",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	n := tokens.Count(sys)
	t.Logf("system prompt: %d characters, %d tokens", len(sys), n)
	if n > promptBudget {
		t.Errorf("system prompt is %d tokens; keep it under %d", n, promptBudget)
	}

	// A skill not triggered stays out; the migrations skill comes in on
	// its word.
	r.say(intent.Action, "add a migration for users")
	sys = r.llm.Requests()[2].System()
	if strings.Contains(sys, "run the test suite") || !strings.Contains(sys, "numbered migration") {
		t.Errorf("skills not matched per message:\n%s", sys)
	}
}

func TestPromptRebuiltAfterContextChanges(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "c", Name: "workspace_create", Arguments: `{"name":"api","template":"go"}`}),
		testkit.Say("Created api."),
	)
	r.say(intent.Action, "create a go workspace called api")
	if s := r.llm.Requests()[0].System(); !strings.Contains(s, "Workspace: none selected") {
		t.Fatalf("first prompt:\n%s", s)
	}
	if s := r.llm.Requests()[1].System(); !strings.Contains(s, "Workspace: api") {
		t.Fatalf("prompt not rebuilt after workspace_create:\n%s", s)
	}
}
