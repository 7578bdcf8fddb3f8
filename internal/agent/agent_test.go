package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var mutating = []string{"workspace_select", "workspace_create", "workspace_delete", "task_create", "task_cancel", "task_respond", "ask_user", "report_progress"}

func TestConversationOffersNoMutatingTools(t *testing.T) {
	for _, kind := range []intent.Kind{intent.Conversation, intent.Inquiry} {
		t.Run(string(kind), func(t *testing.T) {
			r := newRig(t, nil)
			r.llm.Script(testkit.Say("Hello! Nothing is running."))
			if got := texts(r.say(kind, "hey fetch, how are you?")); got != "Hello! Nothing is running." {
				t.Fatalf("reply %q", got)
			}
			offered := r.llm.Requests()[0].Tools()
			if len(offered) == 0 {
				t.Fatal("no read-only tools offered")
			}
			for _, name := range offered {
				if slices.Contains(mutating, name) {
					t.Errorf("a %s offers the mutating tool %s", kind, name)
				}
			}
		})
	}
}

// TestActionOffersEveryTool: with a workspace to select or delete and a
// task that waits for an answer, an action is offered every mutating
// tool.
func TestActionOffersEveryTool(t *testing.T) {
	r := newRig(t, nil)
	r.createWorkspace("api")
	r.selectWorkspace("demo")
	r.tasks.created = []task.Task{{ID: "t-7", ConversationID: conv, Workspace: "demo", State: task.WaitingInput}}
	r.llm.Script(testkit.Say("ok"))
	r.say(intent.Action, "do something")
	for _, name := range mutating {
		if !slices.Contains(r.llm.Requests()[0].Tools(), name) {
			t.Errorf("an action does not offer %s", name)
		}
	}
	// The schemas are generated from the argument types.
	raw := r.llm.Requests()[0].Raw
	for _, want := range []string{`"name":"task_create"`, `"required":["goal"]`, `"queue":{"type":"boolean"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %s", want)
		}
	}
	// Unknown fields are refused when decoded (TestDecodeArguments), not
	// declared in every request.
	if strings.Contains(raw, "additionalProperties") {
		t.Error("the schemas carry additionalProperties")
	}
}

// TestToolsOnlyWhereTheyCanApply: a tool that has nothing to act on is
// not offered, and the harness pack comes only with task_create.
func TestToolsOnlyWhereTheyCanApply(t *testing.T) {
	t.Run("only the selected workspace, no task", func(t *testing.T) {
		r := newRig(t, nil)
		r.selectWorkspace("demo")
		r.llm.Script(testkit.Say("ok"))
		r.say(intent.Action, "add a README")
		got := r.llm.Requests()[0].Tools()
		for _, name := range []string{"workspace_select", "workspace_delete", "task_cancel", "task_respond", "task_status", "task_ship"} {
			if slices.Contains(got, name) {
				t.Errorf("%s offered with nothing to act on: %v", name, got)
			}
		}
		if !slices.Contains(got, "task_create") || !strings.Contains(r.llm.Requests()[0].System(), "# Harnesses for task_create") {
			t.Errorf("an action lacks task_create or the harness pack: %v", got)
		}
	})
	t.Run("another workspace", func(t *testing.T) {
		r := newRig(t, nil)
		r.createWorkspace("api")
		r.selectWorkspace("demo")
		r.llm.Script(testkit.Say("ok"))
		r.say(intent.Action, "switch to api")
		got := r.llm.Requests()[0].Tools()
		if !slices.Contains(got, "workspace_select") || !slices.Contains(got, "workspace_delete") {
			t.Errorf("workspace_select and workspace_delete not offered with a second workspace: %v", got)
		}
	})
	for _, kind := range []intent.Kind{intent.Conversation, intent.Inquiry} {
		t.Run("no harness pack for a "+string(kind), func(t *testing.T) {
			r := newRig(t, nil)
			r.llm.Script(testkit.Say("ok"))
			r.say(kind, "which harness is best?")
			if sys := r.llm.Requests()[0].System(); strings.Contains(sys, "# Harnesses for task_create") {
				t.Errorf("a %s, which cannot start a task, got the harness pack:\n%s", kind, sys)
			}
		})
	}
}

// TestToolsByIntent: each intent is offered what it can use. A
// conversation looks at workspaces only; an inquiry reads code too; an
// action makes do with the map and git state its prompt carries, and does
// not get the surveys (code_map, workspace_status), which it may still
// call.
func TestToolsByIntent(t *testing.T) {
	for _, tt := range []struct {
		kind     intent.Kind
		want     []string
		unwanted []string
	}{
		{intent.Conversation, []string{"workspace_list", "workspace_status"}, []string{"code_map", "code_read", "task_create"}},
		{intent.Inquiry, []string{"workspace_list", "workspace_status", "code_map", "code_outline", "code_read", "code_search", "task_ask"}, []string{"task_create"}},
		{intent.Action, []string{"workspace_list", "code_outline", "code_read", "code_search", "task_create"}, []string{"code_map", "workspace_status", "task_ask"}},
	} {
		t.Run(string(tt.kind), func(t *testing.T) {
			r := newRig(t, nil)
			r.selectWorkspace("demo")
			r.llm.Script(testkit.Say("ok"))
			r.say(tt.kind, "what is in demo?")
			got := r.llm.Requests()[0].Tools()
			for _, name := range tt.want {
				if !slices.Contains(got, name) {
					t.Errorf("%s not offered: %v", name, got)
				}
			}
			for _, name := range tt.unwanted {
				if slices.Contains(got, name) {
					t.Errorf("%s offered: %v", name, got)
				}
			}
		})
	}
	r := newRig(t, nil)
	r.llm.Script(testkit.Use(testkit.Call{ID: "s", Name: "workspace_status", Arguments: `{"name":"demo"}`}), testkit.Say("ok"))
	r.say(intent.Action, "check demo and fix it")
	if res := r.toolResults(1)["s"]; strings.Contains(res, "not available") {
		t.Errorf("an action calling a survey it was not offered: %q", res)
	}
}

// TestTaskToolsOnlyWithATask: task_status and task_ship are offered only
// when the conversation knows of a task (one running, started or reported
// in the history, or spoken of); task_cancel only while one of its tasks
// runs or waits; task_respond only while one waits for an answer.
func TestTaskToolsOnlyWithATask(t *testing.T) {
	offered := func(r *rig, i int) string {
		r.t.Helper()
		got := r.llm.Requests()[i].Tools()
		var out []string
		for _, name := range []string{"task_status", "task_ship", "task_cancel", "task_respond"} {
			if slices.Contains(got, name) {
				out = append(out, name)
			}
		}
		return strings.Join(out, " ")
	}
	t.Run("none, then one started, then it waits", func(t *testing.T) {
		r := newRig(t, nil)
		r.selectWorkspace("demo")
		r.llm.Script(
			testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"add a README"}`}),
			testkit.Say("Started."),
			testkit.Say("It is running."),
			testkit.Say("It asks which licence."),
			testkit.Say("Done."),
		)
		r.say(intent.Action, "add a README")
		r.say(intent.Action, "and a CONTRIBUTING file")
		r.tasks.mu.Lock()
		r.tasks.created[0].State = task.WaitingInput
		r.tasks.mu.Unlock()
		r.say(intent.Action, "what does it want?")
		r.tasks.mu.Lock()
		r.tasks.created[0].State = task.Succeeded
		r.tasks.mu.Unlock()
		r.say(intent.Action, "ship it")
		for i, want := range []string{"", "", "task_status task_ship task_cancel", "task_status task_ship task_cancel task_respond", "task_status task_ship"} {
			if got := offered(r, i); got != want {
				t.Errorf("request %d offers the task tools %q; want %q", i, got, want)
			}
		}
	})
	t.Run("a reported result", func(t *testing.T) {
		r := newRig(t, nil)
		if err := r.agent.Remember(t.Context(), conv, "t-7 succeeded: added the README."); err != nil {
			t.Fatal(err)
		}
		r.llm.Script(testkit.Say("It added the README."))
		r.say(intent.Action, "fix what it got wrong")
		if got := offered(r, 0); got != "task_status task_ship" {
			t.Errorf("after a reported result the task tools %q are offered; want task_status task_ship", got)
		}
	})
}

func TestActionCreatesTaskAndReportsItsID(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "call_1", Name: "task_create", Arguments: `{"goal":"Add a GET /health endpoint returning 200 with a test"}`}),
		testkit.Say("On it: a harness is adding the health check."),
	)
	replies := r.say(intent.Action, "add a health check to the API")
	if len(r.tasks.created) != 1 {
		t.Fatalf("tasks created: %+v", r.tasks.created)
	}
	task := r.tasks.created[0]
	if task.Workspace != "demo" || !strings.Contains(task.Goal, "/health") || task.ConversationID != conv {
		t.Fatalf("task = %+v", task)
	}
	if res := r.toolResults(1)["call_1"]; !strings.Contains(res, task.ID) {
		t.Fatalf("tool result %q lacks the task id %s", res, task.ID)
	}
	if len(replies) != 1 || !strings.Contains(replies[0].Text, task.ID) {
		t.Fatalf("reply %q does not report task %s", texts(replies), task.ID)
	}
}

func TestTaskCreateWithoutWorkspace(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "c1", Name: "task_create", Arguments: `{"goal":"fix the tests"}`}),
		testkit.Say("Which workspace?"),
	)
	r.say(intent.Action, "fix the failing tests")
	res := r.toolResults(1)["c1"]
	if !strings.HasPrefix(res, "error:") || !strings.Contains(res, "workspace_select") || !strings.Contains(res, "workspace_create") {
		t.Fatalf("result %q; want an error telling to select or create a workspace", res)
	}
	if len(r.tasks.created) != 0 {
		t.Fatal("a task was created without a workspace")
	}
}

func TestEmptyArgumentsAreValid(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "a", Name: "workspace_list", Arguments: "{}"}, testkit.Call{ID: "b", Name: "workspace_list", Arguments: ""}),
		testkit.Say("You have demo."),
	)
	r.say(intent.Inquiry, "which workspaces do I have?")
	for id, res := range r.toolResults(1) {
		if strings.HasPrefix(res, "error") || !strings.Contains(res, "demo") {
			t.Errorf("call %s: result %q; want the list", id, res)
		}
	}
}

func TestBadArgumentsAreResultsAndHistoryStaysValid(t *testing.T) {
	for name, args := range map[string]string{
		"300 tabs":      strings.Repeat("\t", 300),
		"not json":      `{"name": demo`,
		"array":         `["demo"]`,
		"unknown field": `{"nme":"demo"}`,
		"missing name":  `{}`,
		"trailing":      `{"name":"demo"} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, nil)
			r.llm.Script(
				testkit.Use(testkit.Call{ID: "c1", Name: "workspace_select", Arguments: args}),
				testkit.Say("Sorry, let me fix that."),
				testkit.Say("Second turn answer."),
			)
			r.say(intent.Action, "select demo")
			res := r.toolResults(1)["c1"]
			if !strings.HasPrefix(res, "error: workspace_select:") {
				t.Fatalf("result %q; want an error naming the tool", res)
			}
			if name == "missing name" && !strings.Contains(res, "name") {
				t.Fatalf("result %q does not name the missing field", res)
			}
			// The next turn sends the stored history; the fake flags any
			// invalid order at cleanup.
			r.say(intent.Conversation, "ok thanks")
			second := r.llm.Requests()[2].Body.Messages
			if len(second) != 1+4+1 {
				t.Fatalf("second turn sent %d messages; want system + 4 of the first turn + user", len(second))
			}
			if c, _ := r.db.Conversation(t.Context(), conv); c.Workspace != "" {
				t.Fatalf("bad arguments changed the workspace to %q", c.Workspace)
			}
		})
	}
}

func TestUnknownAndDisallowedTools(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "u", Name: "shell_exec", Arguments: `{"cmd":"rm -rf /"}`}, testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}),
		testkit.Say("I can't do that here."),
	)
	r.say(intent.Inquiry, "what's in demo?")
	res := r.toolResults(1)
	if !strings.Contains(res["u"], `no tool "shell_exec"`) {
		t.Errorf("unknown tool result %q", res["u"])
	}
	if !strings.Contains(res["d"], "workspace_delete is not available") {
		t.Errorf("disallowed tool result %q", res["d"])
	}
	if !r.hasWorkspace("demo") {
		t.Fatal("an inquiry deleted a workspace")
	}
}

func TestIterationCapEndsWithOneReply(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.MaxRounds = 3 })
	for i := range 3 {
		r.llm.Script(testkit.Use(testkit.Call{ID: "c" + string(rune('a'+i)), Name: "workspace_status", Arguments: `{"name":"demo"}`}))
	}
	r.llm.Script(testkit.Say("demo is clean; I stopped looking."))
	replies := r.say(intent.Action, "check demo over and over")
	reqs := r.llm.Requests()
	if len(reqs) != 4 || !reqs[3].Final() || reqs[2].Final() {
		t.Fatalf("%d requests; want 3 with tools and a final one without", len(reqs))
	}
	if !strings.Contains(reqs[3].System(), "No more tool calls") {
		t.Error("the final request does not tell the model to answer")
	}
	if len(replies) != 1 || replies[0].Text != "demo is clean; I stopped looking." {
		t.Fatalf("replies = %q", texts(replies))
	}
	// The third identical call draws a warning.
	if res := r.toolResults(3)["cc"]; !strings.Contains(res, "Warning") {
		t.Errorf("third identical call: %q; want a warning", res)
	}
}

func TestRepeatedCallStopsTheTurn(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.MaxRounds = 10 })
	for i := range 5 {
		r.llm.Script(testkit.Use(testkit.Call{ID: "r" + string(rune('0'+i)), Name: "workspace_list", Arguments: "{}"}))
	}
	replies := r.say(intent.Action, "list")
	if len(r.llm.Requests()) != 5 || !strings.Contains(texts(replies), "5 times") {
		t.Fatalf("%d requests, reply %q; want the turn stopped at the 5th call and the owner told", len(r.llm.Requests()), texts(replies))
	}
}

func TestAlternatingCallsWarn(t *testing.T) {
	r := newRig(t, nil)
	a := testkit.Call{Name: "workspace_list", Arguments: "{}"}
	b := testkit.Call{Name: "workspace_status", Arguments: `{"name":"demo"}`}
	for i, c := range []testkit.Call{a, b, a, b} {
		c.ID = "x" + string(rune('0'+i))
		r.llm.Script(testkit.Use(c))
	}
	r.llm.Script(testkit.Say("done"))
	r.say(intent.Action, "look around")
	if res := r.toolResults(4)["x3"]; !strings.Contains(res, "alternating") {
		t.Fatalf("A→B→A→B result %q; want a warning", res)
	}
}

func TestProviderErrors(t *testing.T) {
	t.Run("500 500 200", func(t *testing.T) {
		r := newRig(t, nil)
		r.llm.Script(testkit.Fail(500), testkit.Fail(500), testkit.Say("Here you go."))
		replies := r.say(intent.Conversation, "hello")
		if len(replies) != 1 || replies[0].Text != "Here you go." || len(r.llm.Requests()) != 3 {
			t.Fatalf("replies %q after %d requests", texts(replies), len(r.llm.Requests()))
		}
	})
	t.Run("401", func(t *testing.T) {
		r := newRig(t, func(r *rig, c *agent.Config) { c.LLM = r.clientWithKey("sk-or-bad-secret-key") })
		replies := r.say(intent.Action, "add a health check")
		text := texts(replies)
		if len(r.llm.Requests()) != 1 {
			t.Fatalf("%d requests; a 401 is not retried", len(r.llm.Requests()))
		}
		if strings.Contains(text, "sk-or-bad-secret-key") || strings.Contains(text, "provider said") || strings.Contains(text, "No auth") {
			t.Fatalf("reply leaks the key or the provider's body: %q", text)
		}
		if !strings.Contains(text, "OPENROUTER_API_KEY") {
			t.Fatalf("reply %q does not say what to fix", text)
		}
	})
}

func TestDeleteNeedsApproval(t *testing.T) {
	for _, answer := range []string{"no", "yes"} {
		t.Run(answer, func(t *testing.T) {
			r := newRig(t, nil)
			r.createWorkspace("api")
			r.selectWorkspace("api")
			r.llm.Script(
				testkit.Use(testkit.Call{ID: "del", Name: "workspace_delete", Arguments: `{"name":"demo"}`}),
			)
			replies := r.say(intent.Action, "delete the demo workspace")
			if !r.hasWorkspace("demo") {
				t.Fatal("deleted before approval")
			}
			if !r.promptOpen(store.Approval) {
				t.Fatal("no approval open")
			}
			if len(replies) != 1 || !strings.Contains(replies[0].Text, `workspace_delete {"name":"demo"}`) || len(replies[0].Actions) != 2 {
				t.Fatalf("approval reply %+v; want the full action and two buttons", replies)
			}
			p, err := r.db.OpenPrompt(t.Context(), conv)
			if err != nil || p.Kind != store.Approval || p.ExpiresAt == nil || !strings.Contains(p.Action, `"tool":"workspace_delete"`) {
				t.Fatalf("prompt %+v, %v", p, err)
			}
			if err := r.db.ResolvePrompt(t.Context(), p.ID, answer); err != nil {
				t.Fatal(err)
			}
			if answer == "yes" {
				r.llm.Script(testkit.Say("demo is gone."))
			}
			more, err := r.agent.Resolved(t.Context(), p, answer, chat.Owner)
			if err != nil {
				t.Fatal(err)
			}
			switch answer {
			case "no":
				if !r.hasWorkspace("demo") || len(more) != 0 {
					t.Fatalf("denied: deleted=%v replies %q", !r.hasWorkspace("demo"), texts(more))
				}
			case "yes":
				if r.hasWorkspace("demo") || !strings.Contains(texts(more), "Deleted workspace demo") {
					t.Fatalf("approved: still there=%v replies %q", r.hasWorkspace("demo"), texts(more))
				}
				if c, _ := r.db.Conversation(t.Context(), conv); c.Workspace != "api" {
					t.Fatalf("selected workspace %q after the delete; want api still", c.Workspace)
				}
			}
		})
	}
}

// TestGuardAnswersRoutineQuestionsOnly: in every level but supervised the
// guard answers a routine confirmation itself and passes a destructive
// question on to the owner.
func TestGuardAnswersRoutineQuestionsOnly(t *testing.T) {
	for _, level := range []instincts.Autonomy{instincts.Autonomous, instincts.Cautious} {
		t.Run(string(level), func(t *testing.T) {
			r := newRig(t, nil)
			if err := r.db.SetAutonomy(t.Context(), conv, string(level)); err != nil {
				t.Fatal(err)
			}
			r.llm.Script(
				testkit.Use(testkit.Call{ID: "q1", Name: "ask_user", Arguments: `{"question":"Shall I proceed with the plan?"}`}),
				testkit.Use(testkit.Call{ID: "q2", Name: "ask_user", Arguments: `{"question":"Should I delete workspace demo?"}`}),
			)
			replies := r.say(intent.Action, "clean up")
			if res := r.toolResults(1)["q1"]; !strings.Contains(res, "Proceed") {
				t.Fatalf("routine confirmation not answered: %q", res)
			}
			if texts(replies) != "Should I delete workspace demo?" {
				t.Fatalf("reply %q; want the destructive question", texts(replies))
			}
			p, err := r.db.OpenPrompt(t.Context(), conv)
			if err != nil || p.Kind != store.Question || p.Body != "Should I delete workspace demo?" {
				t.Fatalf("prompt %+v, %v", p, err)
			}
			if !r.promptOpen(store.Question) {
				t.Fatal("no question open")
			}
		})
	}
}

func TestSupervisedPassesEveryQuestion(t *testing.T) {
	r := newRig(t, nil)
	if err := r.db.SetAutonomy(t.Context(), conv, string(instincts.Supervised)); err != nil {
		t.Fatal(err)
	}
	r.llm.Script(testkit.Use(testkit.Call{ID: "q", Name: "ask_user", Arguments: `{"question":"Shall I proceed?"}`}))
	if got := texts(r.say(intent.Action, "go")); got != "Shall I proceed?" {
		t.Fatalf("reply %q", got)
	}
	// The answer continues the turn.
	p, err := r.db.OpenPrompt(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	r.db.ResolvePrompt(t.Context(), p.ID, "yes please")
	r.llm.Script(testkit.Say("Proceeding."))
	more, err := r.agent.Resolved(t.Context(), p, "yes please", chat.Owner)
	if err != nil || texts(more) != "Proceeding." {
		t.Fatalf("continuation %q, %v", texts(more), err)
	}
	last := r.llm.Requests()[1].Body.Messages
	if m := last[len(last)-1]; m.Role != "user" || m.Content.Text != "yes please" {
		t.Fatalf("the answer did not reach the model: %+v", m)
	}
}

func TestStopKeepsHistoryValid(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	stopped := errors.New("stopped by the owner")
	r.llm.Script(testkit.Use(testkit.Call{ID: "p", Name: "report_progress", Arguments: `{"message":"working on it"}`}))
	var progress []string
	_, err := r.agent.Respond(ctx, agent.Turn{ConversationID: conv, Text: "do a long thing", Intent: intent.Result{Kind: intent.Action},
		Notify: func(_ context.Context, rep chat.Reply) error {
			progress = append(progress, rep.Text)
			cancel(stopped) // the owner sends /stop while the turn runs
			return nil
		}})
	if !errors.Is(err, stopped) {
		t.Fatalf("err = %v; want the stop cause", err)
	}
	if len(progress) != 1 || progress[0] != "working on it" {
		t.Fatalf("progress = %q", progress)
	}
	// The stopped turn is in the history in a valid order: the next
	// request carries it and the fake checks it.
	r.llm.Script(testkit.Say("fine"))
	r.say(intent.Conversation, "still there?")
	if n := len(r.llm.Requests()[1].Body.Messages); n != 1+4+1 {
		t.Fatalf("next request has %d messages; want system + the stopped turn (4) + user", n)
	}
}

func TestWallTimeLimitEndsWithAFinalAnswer(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.TurnTime = 300 * time.Millisecond })
	r.llm.Script(
		testkit.Step{Delay: 10 * time.Second, Calls: []testkit.Call{{ID: "slow", Name: "workspace_list", Arguments: "{}"}}},
		testkit.Say("I ran out of time; here is what I know."),
	)
	replies := r.say(intent.Action, "survey everything")
	reqs := r.llm.Requests()
	if len(reqs) != 2 || !reqs[1].Final() || texts(replies) != "I ran out of time; here is what I know." {
		t.Fatalf("%d requests, reply %q", len(reqs), texts(replies))
	}
}

// TestToolArgumentErrorsNameTheField: a call with a missing, unknown or
// invalid field gets a result that names the field (and for a harness,
// the known ones), and nothing is done.
func TestToolArgumentErrorsNameTheField(t *testing.T) {
	r := newRig(t, func(_ *rig, c *agent.Config) { c.Harnesses = []string{"claude", "codex", "gemini"} })
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(
			testkit.Call{ID: "missing", Name: "task_create", Arguments: `{"workspace":"demo"}`},
			testkit.Call{ID: "harness", Name: "task_create", Arguments: `{"goal":"add a README","harness":"foo"}`},
			testkit.Call{ID: "type", Name: "task_create", Arguments: `{"goal":42}`},
			testkit.Call{ID: "unknown", Name: "task_create", Arguments: `{"goal":"add a README","branch":"x"}`},
			testkit.Call{ID: "empty", Name: "task_create", Arguments: `{"goal":"   "}`},
		),
		testkit.Say("I could not start it."),
	)
	r.say(intent.Action, "add a README")
	res := r.toolResults(1)
	for id, want := range map[string]string{
		"missing": `error: task_create: missing required field "goal"`,
		"harness": `error: task_create: field "harness": unknown harness "foo" (known: claude, codex, gemini)`,
		"type":    `error: task_create: field "goal": want a string, got number`,
		"unknown": `error: task_create: unknown field "branch"; the fields are "goal", "harness", "model", "plan_first", "queue", "ship", "workspace"`,
		"empty":   `error: task_create: field "goal": must not be empty`,
	} {
		if res[id] != want {
			t.Errorf("call %s: result %q; want %q", id, res[id], want)
		}
	}
	if len(r.tasks.created) != 0 {
		t.Errorf("tasks created from invalid calls: %+v", r.tasks.created)
	}
}

// TestWorkspaceCreateRefusesLocalPaths: the agent clones only remote
// URLs; a file:// URL (which host git would read with Fetch's rights) is
// refused with how to add a local repository, and nothing is made.
func TestWorkspaceCreateRefusesLocalPaths(t *testing.T) {
	r := newRig(t, nil)
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "local", Name: "workspace_create", Arguments: `{"name":"secrets","url":"file:///root/private"}`}),
		testkit.Say("I could not."),
	)
	r.say(intent.Action, "clone file:///root/private as secrets")
	res := r.toolResults(1)["local"]
	if !strings.HasPrefix(res, "error:") || !strings.Contains(res, "fetch workspace add NAME PATH") {
		t.Errorf("result %q; want a refusal naming fetch workspace add", res)
	}
	if _, err := r.ws.Get(t.Context(), "secrets"); err == nil {
		t.Error("workspace secrets exists after a refused clone")
	}
}

// TestTaskCreatePlanFirst: task_create with plan_first makes a task that
// plans first (the engine's CreatePlan), and says so to the model.
func TestTaskCreatePlanFirst(t *testing.T) {
	r := newRig(t, nil)
	r.selectWorkspace("demo")
	r.llm.Script(
		testkit.Use(testkit.Call{ID: "big", Name: "task_create", Arguments: `{"goal":"rewrite the storage layer","plan_first":true}`}),
		testkit.Say("It plans first."),
	)
	r.say(intent.Action, "rewrite the storage layer")
	res := r.toolResults(1)["big"]
	if len(r.tasks.planned) != 1 || !strings.Contains(res, "plans first") {
		t.Errorf("planned %v, result %q; want one task made with CreatePlan", r.tasks.planned, res)
	}
}
