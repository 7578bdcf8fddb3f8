package agent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// hangCatch fails a test whose turn did not end long after it should
// have: a guard against hangs, not a timing assertion.
const hangCatch = 20 * time.Second

// respondWithin runs a turn and fails the test if it does not end within
// hangCatch.
func (r *rig) respondWithin(ctx context.Context, kind intent.Kind, text string) ([]chat.Reply, error) {
	r.t.Helper()
	type result struct {
		replies []chat.Reply
		err     error
	}
	done := make(chan result, 1)
	go func() {
		replies, err := r.agent.Respond(ctx, agent.Turn{ConversationID: conv, UserID: "owner", Role: chat.Owner, Text: text,
			Intent: intent.Result{Kind: kind, Rule: "test"}})
		done <- result{replies, err}
	}()
	select {
	case res := <-done:
		return res.replies, res.err
	case <-time.After(hangCatch):
		r.t.Fatalf("the turn did not end within %s", hangCatch)
		return nil, nil
	}
}

func TestHungProviderEndsByTheTurnDeadline(t *testing.T) {
	hang := testkit.Step{Delay: time.Hour}
	for _, tc := range []struct {
		name  string
		kind  intent.Kind
		steps []testkit.Step
	}{
		{"action hangs in a tool round, then in the final answer", intent.Action, []testkit.Step{hang, hang}},
		{"conversation hangs in a tool round, then in the final answer", intent.Conversation, []testkit.Step{hang, hang}},
		{"inquiry hangs in the final answer", intent.Inquiry, []testkit.Step{testkit.Use(testkit.Call{ID: "l", Name: "workspace_list", Arguments: "{}"}), hang}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, func(_ *rig, c *agent.Config) { c.TurnTime = 400 * time.Millisecond })
			r.llm.Script(tc.steps...)
			replies, err := r.respondWithin(t.Context(), tc.kind, "survey everything")
			if err != nil {
				t.Fatalf("err = %v; a hung provider is a reply, not an error", err)
			}
			if text := texts(replies); len(replies) != 1 || !strings.HasPrefix(text, "The LLM provider (127.0.0.1) did not answer in time") {
				t.Fatalf("replies %q; want one saying the provider did not answer in time", text)
			}
			reqs := r.llm.Requests()
			if len(reqs) != 2 || !reqs[1].Final() {
				t.Fatalf("%d requests; want a tool round and the final answer", len(reqs))
			}
			// The failed turn is in the history in a valid order.
			r.llm.Script(testkit.Say("back"))
			r.say(intent.Conversation, "still there?")
		})
	}
}

func TestStopWhileTheProviderHangs(t *testing.T) {
	stopped := errors.New("stopped by the owner")
	for _, tc := range []struct {
		name string
		kind intent.Kind
		// hang is the step during which the owner stops the turn.
		hang  testkit.Step
		first []testkit.Step
	}{
		{"in a tool round", intent.Action, testkit.Step{Delay: time.Hour}, nil},
		{"in the final answer", intent.Inquiry, testkit.Step{Delay: time.Hour}, []testkit.Step{testkit.Use(testkit.Call{ID: "l", Name: "workspace_list", Arguments: "{}"})}},
		{"while the client waits to retry", intent.Action, testkit.Fail(503), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			arrived := make(chan struct{}, 1)
			waiting := make(chan struct{}, 1)
			r := newRig(t, func(r *rig, c *agent.Config) {
				client, err := llm.New(llm.Config{BaseURL: r.llm.URL(), APIKey: testkit.OpenRouterKey, Model: "test/model",
					MaxDelay: time.Hour, Jitter: func(time.Duration) time.Duration { waiting <- struct{}{}; return time.Minute }})
				if err != nil {
					t.Fatal(err)
				}
				c.LLM = client
			})
			tc.hang.Arrived = arrived
			r.llm.Script(append(tc.first, tc.hang)...)
			ready := arrived
			if tc.hang.Delay == 0 {
				ready = waiting
			}
			go func() {
				select {
				case <-ready:
					cancel(stopped) // the owner sends /stop
				case <-ctx.Done():
				}
			}()
			replies, err := r.respondWithin(ctx, tc.kind, "do a long thing")
			if !errors.Is(err, stopped) || len(replies) != 0 {
				t.Fatalf("err = %v, replies %q; want the stop's cause and no reply", err, texts(replies))
			}
			if msg := err.Error(); strings.Contains(msg, "LLM provider") {
				t.Fatalf("a stop reported as the provider's fault: %q", msg)
			}
			r.llm.Script(testkit.Say("fine"))
			r.say(intent.Conversation, "still there?")
		})
	}
}

func TestProviderFailuresAreRepliesNamingTheProvider(t *testing.T) {
	for _, tc := range []struct {
		name   string
		steps  []testkit.Step
		stream bool
		want   string
	}{
		{"5xx after retries", []testkit.Step{testkit.Fail(500), testkit.Fail(502), testkit.Fail(503), testkit.Fail(500)}, false, "is failing right now (HTTP 500)"},
		{"429 after retries", []testkit.Step{{Status: http.StatusTooManyRequests, RetryAfter: "3600"}}, false, "is rate limiting Fetch"},
		{"403", []testkit.Step{testkit.Fail(403)}, false, "rejected Fetch's API key (HTTP 403). Check OPENROUTER_API_KEY"},
		{"unknown model", []testkit.Step{testkit.Fail(404)}, false, "Check that FETCH_MODEL"},
		{"truncated stream", []testkit.Step{{Text: "I was about to", Truncate: true}}, true, "incomplete or unusable answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, func(r *rig, c *agent.Config) {
				client, err := llm.New(llm.Config{BaseURL: r.llm.URL(), APIKey: testkit.OpenRouterKey, Model: "test/model", BaseDelay: time.Millisecond, Stream: tc.stream})
				if err != nil {
					t.Fatal(err)
				}
				c.LLM = client
			})
			r.llm.Script(tc.steps...)
			text := texts(r.say(intent.Action, "add a health check"))
			if !strings.HasPrefix(text, "The LLM provider (127.0.0.1)") || !strings.Contains(text, tc.want) {
				t.Fatalf("reply %q; want the provider named and %q", text, tc.want)
			}
			for _, leak := range []string{"on my side", "raw provider body", testkit.OpenRouterKey} {
				if strings.Contains(text, leak) {
					t.Fatalf("reply %q contains %q", text, leak)
				}
			}
		})
	}
}
