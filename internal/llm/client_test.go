package llm_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T, f *testkit.OpenRouter, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: f.URL(), APIKey: testkit.OpenRouterKey, Model: "test/model", BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hello"}}}

func TestRetriesServerErrorsThenAnswers(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Fail(500), testkit.Fail(500), testkit.Say("hi there"))
	resp, err := client(t, f, nil).Complete(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "hi there" || len(f.Requests()) != 3 {
		t.Fatalf("answer %q after %d requests; want one answer after 3", resp.Message.Content, len(f.Requests()))
	}
	if resp.Usage.PromptTokens != 100 || resp.Usage.CompletionTokens != 20 {
		t.Fatalf("usage = %+v", resp.Usage)
	}
}

func TestGivesUpAfterThreeRetries(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Fail(502), testkit.Fail(503), testkit.Fail(500), testkit.Fail(500))
	_, err := client(t, f, nil).Complete(t.Context(), hello)
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrUnavailable) || e.Attempts != 4 || len(f.Requests()) != 4 {
		t.Fatalf("err = %v after %d requests; want ErrUnavailable after 4", err, len(f.Requests()))
	}
}

func TestUnauthorizedIsNotRetriedAndLeaksNothing(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	c, err := llm.New(llm.Config{BaseURL: f.URL(), APIKey: "sk-or-wrong-key-secret", Model: "m", BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(t.Context(), hello)
	if !errors.Is(err, llm.ErrAuth) || len(f.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests; want ErrAuth after 1", err, len(f.Requests()))
	}
	for _, text := range []string{err.Error(), llm.UserMessage(err)} {
		if strings.Contains(text, "sk-or-wrong-key-secret") || strings.Contains(text, "provider said") || strings.Contains(text, "No auth credentials") {
			t.Errorf("%q leaks the key or the provider's body", text)
		}
	}
	if !strings.Contains(llm.UserMessage(err), "OPENROUTER_API_KEY") {
		t.Errorf("user message %q does not say what to fix", llm.UserMessage(err))
	}
}

func TestOtherClientErrorsAreNotRetried(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Fail(400))
	_, err := client(t, f, nil).Complete(t.Context(), hello)
	if !errors.Is(err, llm.ErrRejected) || len(f.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.Requests()))
	}
	if strings.Contains(llm.UserMessage(err), "raw provider body") || strings.Contains(err.Error(), "raw provider body") {
		t.Fatalf("raw body reaches the owner: %q / %q", err, llm.UserMessage(err))
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Step{Status: http.StatusTooManyRequests, RetryAfter: "0"}, testkit.Say("ok"))
	if _, err := client(t, f, nil).Complete(t.Context(), hello); err != nil || len(f.Requests()) != 2 {
		t.Fatalf("err = %v after %d requests", err, len(f.Requests()))
	}
	// A Retry-After longer than the longest wait is not waited for.
	g := testkit.NewOpenRouter(t)
	g.Script(testkit.Step{Status: http.StatusTooManyRequests, RetryAfter: "3600"})
	_, err := client(t, g, nil).Complete(t.Context(), hello)
	if !errors.Is(err, llm.ErrRateLimited) || len(g.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests; want ErrRateLimited at once", err, len(g.Requests()))
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Step{Delay: 2 * time.Second, Text: "late"}, testkit.Say("on time"))
	resp, err := client(t, f, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond }).Complete(t.Context(), hello)
	if err != nil || resp.Message.Content != "on time" {
		t.Fatalf("resp %q err %v", resp.Message.Content, err)
	}
}

func TestToolCallsAndEmptyArguments(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Use(testkit.Call{ID: "c1", Name: "workspace_list", Arguments: ""}), testkit.Say("done"))
	c := client(t, f, nil)
	tools := []llm.Tool{{Name: "workspace_list", Description: "list", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}}
	resp, err := c.Complete(t.Context(), llm.Request{Messages: hello.Messages, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "workspace_list" || resp.Message.ToolCalls[0].Arguments != "" {
		t.Fatalf("calls = %+v", resp.Message.ToolCalls)
	}
	// Sending the call back with its empty arguments goes out as "{}".
	msgs := append(append([]llm.Message{}, hello.Messages...), resp.Message, llm.Message{Role: llm.ToolRole, ToolCallID: "c1", Content: "[]"})
	if _, err := c.Complete(t.Context(), llm.Request{Messages: msgs, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	if got := f.Requests()[1].Body.Messages[1].ToolCalls[0].Function.Arguments; got != "{}" {
		t.Fatalf("resent arguments = %q; want {}", got)
	}
	if got := f.Requests()[0].Tools(); len(got) != 1 || got[0] != "workspace_list" {
		t.Fatalf("tools offered = %v", got)
	}
}

func TestStreamingAssemblesTheAnswer(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(
		testkit.Step{Text: "Looking at the workspaces now.", Calls: []testkit.Call{{ID: "c1", Name: "workspace_status", Arguments: `{"name":"demo"}`}}, PromptTokens: 7, CompletionTokens: 3, Cost: 0.25},
		testkit.Step{Text: "cut short", Truncate: true},
	)
	c := client(t, f, func(c *llm.Config) { c.Stream = true })
	resp, err := c.Complete(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Looking at the workspaces now." || len(resp.Message.ToolCalls) != 1 ||
		resp.Message.ToolCalls[0].Arguments != `{"name":"demo"}` || resp.FinishReason != "tool_calls" || resp.Usage.Cost != 0.25 {
		t.Fatalf("assembled %+v", resp)
	}
	if !f.Requests()[0].Body.Stream {
		t.Fatal("request did not ask for a stream")
	}
	if _, err := c.Complete(t.Context(), hello); !errors.Is(err, llm.ErrBadResponse) {
		t.Fatalf("truncated stream: err = %v; want ErrBadResponse", err)
	}
}

func TestLogNeverHoldsTheKey(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	var logs strings.Builder
	c, err := llm.New(llm.Config{BaseURL: f.URL(), APIKey: "sk-or-echoed-secret", Model: "m", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(t.Context(), hello)
	var e *llm.Error
	if !errors.As(err, &e) || strings.Contains(e.Detail, "sk-or-echoed-secret") {
		t.Fatalf("detail %q", e.Detail)
	}
	if strings.Contains(logs.String(), "sk-or-echoed-secret") || !strings.Contains(logs.String(), "completion failed") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

// hangCatch fails a test whose call did not return long after it should
// have: a guard against hangs, not a timing assertion.
const hangCatch = 20 * time.Second

// within runs call and fails the test if it does not return within
// hangCatch.
func within(t testing.TB, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangCatch):
		t.Fatalf("the call did not return within %s", hangCatch)
		return nil
	}
}

func TestDeadlineEndsAHungCompletion(t *testing.T) {
	turnOver := errors.New("turn over")
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			f := testkit.NewOpenRouter(t)
			f.Script(testkit.Step{Delay: time.Hour, Text: "never"})
			c := client(t, f, func(c *llm.Config) { c.Stream = stream })
			ctx, cancel := context.WithTimeoutCause(t.Context(), 200*time.Millisecond, turnOver)
			defer cancel()
			err := within(t, func() error { _, err := c.Complete(ctx, hello); return err })
			var e *llm.Error
			if !errors.As(err, &e) || !errors.Is(err, llm.ErrTimeout) || !errors.Is(err, turnOver) {
				t.Fatalf("err = %v; want ErrTimeout matching the deadline's cause", err)
			}
			if msg := llm.UserMessage(err); !strings.Contains(msg, "did not answer in time") || !strings.Contains(msg, "127.0.0.1") {
				t.Fatalf("user message %q", msg)
			}
		})
	}
}

func TestCancelReturnsTheCauseAtOnce(t *testing.T) {
	stopped := errors.New("stopped by the owner")
	for _, tc := range []struct {
		name   string
		stream bool
		step   testkit.Step
	}{
		{"while the request hangs", false, testkit.Step{Delay: time.Hour}},
		{"while the stream hangs", true, testkit.Step{Delay: time.Hour}},
		{"while waiting to retry", false, testkit.Fail(503)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testkit.NewOpenRouter(t)
			waiting := make(chan struct{}, 1)
			arrived := make(chan struct{}, 1)
			tc.step.Arrived = arrived
			f.Script(tc.step)
			c := client(t, f, func(c *llm.Config) {
				c.Stream = tc.stream
				c.Jitter = func(time.Duration) time.Duration { waiting <- struct{}{}; return time.Hour }
			})
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			ready := arrived
			if tc.step.Delay == 0 {
				ready = waiting // cancel during the backoff wait
			}
			go func() { <-ready; cancel(stopped) }()
			err := within(t, func() error { _, err := c.Complete(ctx, hello); return err })
			var e *llm.Error
			if !errors.Is(err, stopped) || errors.As(err, &e) || llm.UserMessage(err) != "" {
				t.Fatalf("err = %v (user message %q); want the stop's cause, not a provider error", err, llm.UserMessage(err))
			}
			if n := len(f.Requests()); n != 1 {
				t.Fatalf("%d requests; want 1", n)
			}
		})
	}
}

func TestRetryNeverWaitsPastTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   testkit.Step
		kind   error
		status int
	}{
		{"Retry-After beyond the deadline", testkit.Step{Status: http.StatusTooManyRequests, RetryAfter: "30"}, llm.ErrRateLimited, 429},
		{"backoff beyond the deadline", testkit.Fail(502), llm.ErrUnavailable, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testkit.NewOpenRouter(t)
			f.Script(tc.step)
			c := client(t, f, func(c *llm.Config) {
				c.MaxDelay = time.Hour
				c.Jitter = func(time.Duration) time.Duration { return time.Minute }
			})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err := within(t, func() error { _, err := c.Complete(ctx, hello); return err })
			var e *llm.Error
			// The provider's answer, at once: not the deadline's expiry.
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) || e.Status != tc.status || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Fatalf("err = %v (ctx %v); want %v with HTTP %d before the deadline", err, ctx.Err(), tc.kind, tc.status)
			}
			if n := len(f.Requests()); n != 1 {
				t.Fatalf("%d requests; want 1", n)
			}
		})
	}
}

func TestEveryAttemptTimingOutIsATimeout(t *testing.T) {
	f := testkit.NewOpenRouter(t)
	f.Script(testkit.Step{Delay: time.Hour}, testkit.Step{Delay: time.Hour})
	c := client(t, f, func(c *llm.Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 1 })
	_, err := c.Complete(t.Context(), hello)
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrTimeout) || e.Attempts != 2 {
		t.Fatalf("err = %v; want ErrTimeout after 2 attempts", err)
	}
}

func TestUserMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		step testkit.Step
		want []string
	}{
		{"401", testkit.Fail(401), []string{"(127.0.0.1)", "rejected Fetch's API key", "OPENROUTER_API_KEY"}},
		{"403", testkit.Fail(403), []string{"rejected Fetch's API key", "OPENROUTER_API_KEY"}},
		{"402", testkit.Fail(402), []string{"out of credit"}},
		{"404", testkit.Fail(404), []string{"refused the request", "FETCH_MODEL"}},
		{"429", testkit.Step{Status: 429, RetryAfter: "3600"}, []string{"rate limiting", "Try again"}},
		{"500", testkit.Fail(500), []string{"HTTP 500", "on its side, not Fetch's", "try again later"}},
		{"truncated stream", testkit.Step{Text: "cut", Truncate: true}, []string{"incomplete", "Try again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testkit.NewOpenRouter(t)
			for range 4 {
				f.Script(tc.step)
			}
			c := client(t, f, func(c *llm.Config) { c.Stream = tc.name == "truncated stream" })
			_, err := c.Complete(t.Context(), hello)
			msg := llm.UserMessage(err)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if !strings.HasPrefix(msg, "The LLM provider") || strings.Contains(msg, "raw provider body") || strings.Contains(msg, testkit.OpenRouterKey) {
				t.Errorf("message %q does not name the provider or leaks its body", msg)
			}
		})
	}
	if llm.UserMessage(context.Canceled) != "" || llm.UserMessage(errors.New("disk full")) != "" {
		t.Fatal("a message for an error that is not the provider's")
	}
}

func TestCacheBreakpointsAndMaxTokensOnTheWire(t *testing.T) {
	req := llm.Request{MaxTokens: 321, Messages: []llm.Message{
		{Role: llm.System, Content: "fixed part\n\nsession part", CacheUpTo: len("fixed part")},
		{Role: llm.User, Content: "hello", CacheUpTo: len("hello")},
	}}
	for _, tc := range []struct {
		model string
		want  []testkit.Breakpoint
	}{
		{"anthropic/claude-sonnet-4.5", []testkit.Breakpoint{{Role: "system", Upto: "fixed part", Type: "ephemeral"}, {Role: "user", Upto: "hello", Type: "ephemeral"}}},
		{"google/gemini-2.5-pro", []testkit.Breakpoint{{Role: "system", Upto: "fixed part", Type: "ephemeral"}, {Role: "user", Upto: "hello", Type: "ephemeral"}}},
		{"openai/gpt-4.1", nil},
		{"deepseek/deepseek-chat", nil},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.model, stream), func(t *testing.T) {
				f := testkit.NewOpenRouter(t)
				step := testkit.Say("hi")
				step.PromptTokens, step.CachedTokens, step.CacheWriteTokens = 1500, 1024, 200
				f.Script(step)
				resp, err := client(t, f, func(c *llm.Config) { c.Model, c.Stream = tc.model, stream }).Complete(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				got := f.Requests()[0]
				if got.Body.MaxTokens != 321 || !strings.Contains(got.Raw, `"max_tokens":321`) {
					t.Errorf("max_tokens = %d; want 321", got.Body.MaxTokens)
				}
				if bp := got.Breakpoints(); fmt.Sprint(bp) != fmt.Sprint(tc.want) {
					t.Errorf("breakpoints %+v; want %+v", bp, tc.want)
				}
				// The text is the same whatever the parts.
				if got.System() != "fixed part\n\nsession part" || testkit.Text(got.Body.Messages[1]) != "hello" {
					t.Errorf("system %q, user %q", got.System(), testkit.Text(got.Body.Messages[1]))
				}
				if u := resp.Usage; u.PromptTokens != 1500 || u.CachedTokens != 1024 || u.CacheWriteTokens != 200 {
					t.Errorf("usage %+v; want 1500 prompt tokens of which 1024 cached, 200 written", u)
				}
			})
		}
	}
}

// TestCostAsOpenRouterReportsIt: every completion asks OpenRouter for
// usage accounting (usage: {include: true}), streamed or not, and the
// call's cost is the one the response reports (usage.cost), not one
// worked out from a price table; the fake reports it only when asked,
// as OpenRouter does.
func TestCostAsOpenRouterReportsIt(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			f := testkit.NewOpenRouter(t)
			f.Script(testkit.Step{Text: "done", PromptTokens: 1000, CompletionTokens: 50, Cost: 0.0123})
			c := client(t, f, func(cfg *llm.Config) { cfg.Stream, cfg.Model = stream, "anthropic/claude-sonnet-4.5" })
			defer c.Close()
			resp, err := c.Complete(t.Context(), hello)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage.Cost != 0.0123 {
				t.Errorf("cost $%v; want the $0.0123 OpenRouter reported", resp.Usage.Cost)
			}
			reqs := f.Requests()
			if len(reqs) != 1 || reqs[0].Body.Usage == nil || !reqs[0].Body.Usage.Include || !strings.Contains(reqs[0].Raw, `"usage":{"include":true}`) {
				t.Errorf("the request does not ask for usage accounting: %s", reqs[0].Raw)
			}
		})
	}
}
