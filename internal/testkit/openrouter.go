package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openrouter "github.com/revrost/go-openrouter"
)

// OpenRouterKey is the API key the fake OpenRouter accepts.
const OpenRouterKey = "sk-or-test-0123456789abcdef"

// Call is a scripted tool call. Arguments is sent exactly as given, so a
// script can send "", "{}", whitespace or broken JSON.
type Call struct {
	ID        string
	Name      string
	Arguments string
}

// Step is one scripted answer of the fake OpenRouter.
type Step struct {
	// Text is the assistant's content.
	Text string
	// Calls are the tool calls the assistant makes.
	Calls []Call
	// Status, when not 0 or 200, answers with this HTTP status and Body
	// (an OpenRouter error object when Body is empty).
	Status int
	Body   string
	// RetryAfter is sent as the Retry-After header when not empty.
	RetryAfter string
	// Delay holds the answer back (for timeouts); the answer is dropped
	// when the client gives up first.
	Delay time.Duration
	// Arrived, when not nil, is sent a value without blocking when the
	// request this step answers arrives, before any Delay: a test waits
	// on it to act while the request hangs (give it a buffer of 1).
	Arrived chan<- struct{}
	// Truncate ends a streamed answer before its finish reason.
	Truncate bool
	// PromptTokens, CompletionTokens and Cost are reported as usage; Cost
	// (usage.cost and cost_details, in dollars) only when the request
	// asked for usage accounting (usage: {include: true}), as OpenRouter
	// does.
	PromptTokens, CompletionTokens int
	Cost                           float64
	// CachedTokens and CacheWriteTokens are reported as the usage's
	// prompt_tokens_details (cached_tokens, cache_write_tokens). The
	// fake keeps no cache: a test scripts what the provider would say.
	CachedTokens, CacheWriteTokens int
}

// Say is a text answer.
func Say(text string) Step { return Step{Text: text, PromptTokens: 100, CompletionTokens: 20} }

// Use is an answer that calls tools.
func Use(calls ...Call) Step { return Step{Calls: calls, PromptTokens: 100, CompletionTokens: 20} }

// Fail is an HTTP error answer.
func Fail(status int) Step { return Step{Status: status} }

// Request is one request the fake received.
type Request struct {
	Header http.Header
	Body   openrouter.ChatCompletionRequest
	Raw    string
	// Violation is why the request's message order is invalid, "" when
	// it is valid.
	Violation string
}

// Tools are the names of the tools offered.
func (r Request) Tools() []string {
	var out []string
	for _, t := range r.Body.Tools {
		if t.Function != nil {
			out = append(out, t.Function.Name)
		}
	}
	return out
}

// Final reports whether the request asks for a text answer: no tools
// declared, or tool_choice "none".
func (r Request) Final() bool {
	return len(r.Body.Tools) == 0 || r.Body.ToolChoice == "none"
}

// System is the system message's text, its parts joined when it was sent
// as parts.
func (r Request) System() string {
	for _, m := range r.Body.Messages {
		if m.Role == "system" {
			return Text(m)
		}
	}
	return ""
}

// Text is a message's text: its content string, or its text parts joined.
func Text(m openrouter.ChatCompletionMessage) string {
	if len(m.Content.Multi) == 0 {
		return m.Content.Text
	}
	var b strings.Builder
	for _, p := range m.Content.Multi {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Breakpoint is a cache_control marker found in a request: the role of
// the message it is in, the text up to and including its part within that
// message, and the marker's type.
type Breakpoint struct {
	Role, Upto, Type string
}

// Breakpoints lists the request's cache_control markers, in order.
func (r Request) Breakpoints() []Breakpoint {
	var out []Breakpoint
	for _, m := range r.Body.Messages {
		var upto strings.Builder
		for _, p := range m.Content.Multi {
			upto.WriteString(p.Text)
			if p.CacheControl != nil {
				out = append(out, Breakpoint{Role: m.Role, Upto: upto.String(), Type: p.CacheControl.Type})
			}
		}
	}
	return out
}

// OpenRouter is a fake of OpenRouter's chat completions API
// (POST /api/v1/chat/completions), driven by the real go-openrouter client
// through the Fetch LLM client. Each test scripts its answers; every
// request is recorded, and one whose tool-message order a provider would
// reject is answered 400 and fails the test at cleanup. GET /api/v1/key
// (the key's information, what fetch doctor asks) is answered too,
// outside the script.
type OpenRouter struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	script   []Step
	byTool   map[string][]Step
	requests []Request
	calls    int
}

// NewOpenRouter starts the fake on 127.0.0.1; it stops at test cleanup,
// which also fails the test for requests with an invalid message order or
// that found no scripted answer.
func NewOpenRouter(t testing.TB) *OpenRouter {
	t.Helper()
	f := &OpenRouter{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		for i, r := range f.Requests() {
			if r.Violation != "" {
				t.Errorf("fake openrouter: request %d has an invalid message order: %s", i, r.Violation)
			}
		}
	})
	return f
}

// URL is the base URL to give the client (FETCH_LLM_URL).
func (f *OpenRouter) URL() string { return f.srv.URL + "/api/v1" }

// Script appends answers, given in order to the next requests.
func (f *OpenRouter) Script(steps ...Step) {
	f.mu.Lock()
	f.script = append(f.script, steps...)
	f.mu.Unlock()
}

// ScriptFor appends answers for the requests that offer tool (by name),
// kept apart from Script's: a request that offers tool takes the next of
// these, and no other request does. A call that runs beside a
// conversation's (Fetch's review of a change, which offers
// submit_review) is scripted this way, whatever order the two come in.
func (f *OpenRouter) ScriptFor(tool string, steps ...Step) {
	f.mu.Lock()
	if f.byTool == nil {
		f.byTool = map[string][]Step{}
	}
	f.byTool[tool] = append(f.byTool[tool], steps...)
	f.mu.Unlock()
}

// next takes the answer for a request offering tools: the next of
// ScriptFor's for the first of them that has a script of its own, else
// the next of Script's. The caller holds f.mu.
func (f *OpenRouter) next(tools []string) (Step, bool) {
	for _, tool := range tools {
		if q, ok := f.byTool[tool]; ok {
			if len(q) == 0 {
				return Step{}, false
			}
			f.byTool[tool] = q[1:]
			return q[0], true
		}
	}
	if len(f.script) == 0 {
		return Step{}, false
	}
	step := f.script[0]
	f.script = f.script[1:]
	return step, true
}

// Requests returns every request received so far.
func (f *OpenRouter) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

func (f *OpenRouter) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/api/v1/key" {
		f.serveKey(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/chat/completions" {
		http.Error(w, `{"error":{"code":404,"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body openrouter.ChatCompletionRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		orWriteError(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body, Raw: string(raw), Violation: validOrder(raw)}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if r.Header.Get("Authorization") != "Bearer "+OpenRouterKey {
		f.mu.Unlock()
		orWriteError(w, http.StatusUnauthorized, "No auth credentials found (provider said: key "+r.Header.Get("Authorization")+" invalid)")
		return
	}
	if req.Violation != "" {
		f.mu.Unlock()
		orWriteError(w, http.StatusBadRequest, "Provider returned error: "+req.Violation)
		return
	}
	step, ok := f.next(req.Tools())
	if !ok {
		f.mu.Unlock()
		f.t.Errorf("fake openrouter: request %d (tools %v) found no scripted answer", len(f.requests)-1, req.Tools())
		orWriteError(w, http.StatusInternalServerError, "fake: no scripted answer")
		return
	}
	f.calls++
	id := fmt.Sprintf("gen-%d", f.calls)
	f.mu.Unlock()

	if step.Arrived != nil {
		select {
		case step.Arrived <- struct{}{}:
		default:
		}
	}
	if step.Delay > 0 {
		select {
		case <-time.After(step.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if step.RetryAfter != "" {
		w.Header().Set("Retry-After", step.RetryAfter)
	}
	if step.Status != 0 && step.Status != http.StatusOK {
		if step.Body != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(step.Status)
			io.WriteString(w, step.Body)
			return
		}
		orWriteError(w, step.Status, fmt.Sprintf("Upstream provider error %d: raw provider body with internals", step.Status))
		return
	}
	if body.Stream {
		f.stream(w, id, body.Model, step, accounting(body))
		return
	}
	if body.ToolChoice == "none" && len(step.Calls) > 0 {
		f.t.Errorf("fake openrouter: request %d has tool_choice none but the script answers with tool calls", len(f.requests)-1)
	}
	msg := map[string]any{"role": "assistant", "content": step.Text}
	finish := "stop"
	if len(step.Calls) > 0 {
		msg["tool_calls"] = orWireCalls(step.Calls, false)
		finish = "tool_calls"
	}
	orWriteJSON(w, map[string]any{
		"id": id, "object": "chat.completion", "created": 1, "model": body.Model, "provider": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   orUsage(step, accounting(body)),
	})
}

// stream answers as server-sent events: content in small deltas, tool
// calls by index with their arguments split, then the finish reason and
// usage, then [DONE] — unless the step truncates the stream.
func (f *OpenRouter) stream(w http.ResponseWriter, id, model string, step Step, accounting bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any, u any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if u != nil {
			c["usage"] = u
		}
		return c
	}
	io.WriteString(w, ": OPENROUTER PROCESSING\n\n")
	for _, part := range orSplit(step.Text, 7) {
		send(chunk(map[string]any{"role": "assistant", "content": part}, nil, nil))
	}
	for i, c := range step.Calls {
		head, tail := c.Arguments, ""
		if len(head) > 4 {
			head, tail = c.Arguments[:len(c.Arguments)/2], c.Arguments[len(c.Arguments)/2:]
		}
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": head}}}}, nil, nil))
		if tail != "" {
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": tail}}}}, nil, nil))
		}
	}
	if step.Truncate {
		return
	}
	finish := "stop"
	if len(step.Calls) > 0 {
		finish = "tool_calls"
	}
	send(chunk(map[string]any{}, finish, orUsage(step, accounting)))
	io.WriteString(w, "data: [DONE]\n\n")
}

func orSplit(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

func orWireCalls(calls []Call, _ bool) []any {
	out := make([]any, len(calls))
	for i, c := range calls {
		out[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
	}
	return out
}

// accounting tells whether a request asked for usage accounting, which
// adds the call's cost to its usage.
func accounting(body openrouter.ChatCompletionRequest) bool {
	return body.Usage != nil && body.Usage.Include
}

func orUsage(s Step, accounting bool) map[string]any {
	u := map[string]any{"prompt_tokens": s.PromptTokens, "completion_tokens": s.CompletionTokens,
		"total_tokens": s.PromptTokens + s.CompletionTokens}
	if accounting {
		u["cost"], u["is_byok"] = s.Cost, false
		u["cost_details"] = map[string]any{"upstream_inference_cost": nil}
	}
	if s.CachedTokens > 0 || s.CacheWriteTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": s.CachedTokens, "cache_write_tokens": s.CacheWriteTokens}
	}
	return u
}

func orWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// serveKey answers GET /api/v1/key, OpenRouter's information on the key
// of the request: 401 for any key but OpenRouterKey. It is not a request
// of the script (no completion).
func (f *OpenRouter) serveKey(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+OpenRouterKey {
		orWriteError(w, http.StatusUnauthorized, "User not found.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
		"label": "sk-or-test-012...def", "limit": 10.0, "limit_remaining": 7.5, "usage": 2.5,
		"is_free_tier": false, "rate_limit": map[string]any{"requests": 20, "interval": "10s"},
	}})
}

func orWriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg}})
}

// validOrder checks what providers check of a chat: system messages only
// first; every assistant message with tool calls followed at once by
// exactly one tool message per call id; no tool message anywhere else; a
// non-empty JSON object as every tool call's arguments. It returns "" for a
// valid request.
func validOrder(raw []byte) string {
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return "body: " + err.Error()
	}
	ms := body.Messages
	if len(ms) == 0 {
		return "no messages"
	}
	open := map[string]bool{}
	for i, m := range ms {
		if len(open) > 0 && m.Role != "tool" {
			return fmt.Sprintf("message %d (%s) comes before the results of tool calls %v", i, m.Role, openIDs(open))
		}
		switch m.Role {
		case "system":
			if i > 0 && ms[i-1].Role != "system" {
				return fmt.Sprintf("message %d: system message after the start", i)
			}
		case "user":
			if len(m.Content) == 0 || string(m.Content) == `""` || string(m.Content) == "null" {
				return fmt.Sprintf("message %d: empty user message", i)
			}
		case "assistant":
			for _, c := range m.ToolCalls {
				if c.ID == "" {
					return fmt.Sprintf("message %d: tool call without id", i)
				}
				if c.Function.Arguments == nil || strings.TrimSpace(*c.Function.Arguments) == "" {
					return fmt.Sprintf("message %d: tool call %s has no arguments", i, c.ID)
				}
				var obj map[string]any
				if json.Unmarshal([]byte(*c.Function.Arguments), &obj) != nil {
					return fmt.Sprintf("message %d: tool call %s arguments are not a JSON object: %q", i, c.ID, *c.Function.Arguments)
				}
				if open[c.ID] {
					return fmt.Sprintf("message %d: duplicate tool call id %s", i, c.ID)
				}
				open[c.ID] = true
			}
			if len(m.ToolCalls) == 0 && (len(m.Content) == 0 || string(m.Content) == `""` || string(m.Content) == "null") {
				return fmt.Sprintf("message %d: empty assistant message", i)
			}
		case "tool":
			if !open[m.ToolCallID] {
				return fmt.Sprintf("message %d: tool result for %q, which is not an open call of the previous assistant message", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			return fmt.Sprintf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("tool calls %v have no results", openIDs(open))
	}
	if last := ms[len(ms)-1].Role; last != "user" && last != "tool" {
		return fmt.Sprintf("the last message is %s; a completion continues from user or tool", last)
	}
	return ""
}

func openIDs(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
