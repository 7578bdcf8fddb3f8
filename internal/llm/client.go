package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	openrouter "github.com/revrost/go-openrouter"
)

// Role is who wrote a message.
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Message is one message of a chat.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// CacheUpTo, when above 0, ends a cacheable prefix of the request
	// after that many bytes of Content (len(Content): after the whole
	// message). For a model whose provider caches only what is marked
	// (TakesCacheMarkers), the content goes as text parts with a cache
	// breakpoint on the part that ends there; for the others, which cache
	// prefixes by themselves, it changes nothing on the wire.
	CacheUpTo int `json:"-"`
}

// ToolCall is one call of a tool by the model. Arguments is the raw
// string the model sent, which may be anything.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool offered to the model. Parameters is its JSON Schema.
type Tool struct {
	Name        string
	Description string
	Parameters  any
}

// Request is one completion request.
type Request struct {
	Messages []Message
	// Tools offered.
	Tools []Tool
	// NoToolCalls asks for a text answer while still declaring Tools
	// (tool_choice "none"): providers reject a history with tool calls
	// when the request declares no tools.
	NoToolCalls bool
	// MaxTokens caps the answer (max_tokens), reasoning included where a
	// model reasons; 0 sends no cap.
	MaxTokens int
}

// Usage is what a completion cost, from the provider's usage fields.
type Usage struct {
	// PromptTokens counts all input tokens, cached ones included.
	PromptTokens     int
	CompletionTokens int
	// CachedTokens of the prompt were read from the provider's cache
	// (usage.prompt_tokens_details.cached_tokens); CacheWriteTokens were
	// written to it (cache_write_tokens). Both are 0 when the provider
	// reports nothing.
	CachedTokens     int
	CacheWriteTokens int
	// Cost in US dollars, when the provider reports it.
	Cost float64
}

// Tokens is the total token count.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// Add sums two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		Cost: u.Cost + v.Cost,
	}
}

// Response is the model's answer.
type Response struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Config is what a Client needs. BaseURL, APIKey and Model are required.
type Config struct {
	// BaseURL of the OpenAI-compatible API, e.g.
	// https://openrouter.ai/api/v1; requests go to BaseURL/chat/completions.
	BaseURL string
	APIKey  string
	Model   string
	// MaxRetries is how many times a failed request is retried (429,
	// 5xx, timeouts); 0 means the default, 3. Negative means never.
	MaxRetries int
	// BaseDelay is the first backoff step (default 500ms); each retry
	// doubles it, with full jitter.
	BaseDelay time.Duration
	// MaxDelay caps one wait, including a Retry-After (default 30s). A
	// Retry-After longer than that is not waited for, and neither is a
	// wait that would end after the context's deadline: the last answer
	// is returned at once instead.
	MaxDelay time.Duration
	// Timeout bounds the wait for the response headers of one attempt
	// (default 2m). The whole completion, retries and waits included,
	// ends by the context's deadline.
	Timeout time.Duration
	// Stream asks for the answer as server-sent events, assembled here.
	Stream bool
	// Jitter returns a random duration in [0, d); rand.N when nil.
	Jitter func(d time.Duration) time.Duration
	Logger *slog.Logger
}

// Client completes chats.
type Client struct {
	cfg   Config
	or    *openrouter.Client
	retry *retrying
	log   *slog.Logger
	// provider is the API's host name, to name it to the owner.
	provider string
}

// New builds a client. It sends nothing.
func New(cfg Config) (*Client, error) {
	var problems []string
	var provider string
	if cfg.BaseURL == "" {
		problems = append(problems, "no base URL")
	} else if u, err := url.Parse(cfg.BaseURL); err != nil || u.Hostname() == "" {
		problems = append(problems, "base URL is not an absolute URL")
	} else {
		provider = u.Hostname()
	}
	if cfg.APIKey == "" {
		problems = append(problems, "no API key")
	}
	if cfg.Model == "" {
		problems = append(problems, "no model")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("llm: new: %s", strings.Join(problems, ", "))
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = 500 * time.Millisecond
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 30 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Jitter == nil {
		cfg.Jitter = func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = cfg.Timeout
	r := &retrying{
		next: &http.Client{Transport: transport},
		cfg:  cfg,
		log:  cfg.Logger,
	}
	orc := openrouter.DefaultConfig(cfg.APIKey)
	orc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	orc.HTTPClient = r
	orc.XTitle = "Fetch"
	return &Client{cfg: cfg, or: openrouter.NewClientWithConfig(*orc), retry: r, log: cfg.Logger, provider: provider}, nil
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.retry.next.CloseIdleConnections() }

// Model is the model the client asks.
func (c *Client) Model() string { return c.cfg.Model }

// Complete sends one completion request, retrying as documented.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	attempts := new(int)
	ctx = context.WithValue(ctx, attemptsKey{}, attempts)
	orReq := openrouter.ChatCompletionRequest{
		Model:     c.cfg.Model,
		Messages:  toWire(req.Messages, TakesCacheMarkers(c.cfg.Model)),
		MaxTokens: req.MaxTokens,
		Usage:     &openrouter.IncludeUsage{Include: true},
	}
	for _, t := range req.Tools {
		orReq.Tools = append(orReq.Tools, openrouter.Tool{
			Type:     openrouter.ToolTypeFunction,
			Function: &openrouter.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters},
		})
	}
	if req.NoToolCalls && len(orReq.Tools) > 0 {
		orReq.ToolChoice = "none"
	}
	var resp Response
	var err error
	if c.cfg.Stream {
		resp, err = c.stream(ctx, orReq)
	} else {
		resp, err = c.complete(ctx, orReq)
	}
	if err != nil {
		return Response{}, c.failed(ctx, err, *attempts)
	}
	return resp, nil
}

// failed classifies a failed completion. A cancelled context (the owner's
// stop, a shutdown) is not the provider's fault: its cause comes back as
// it is. A context whose deadline passed means the provider did not answer
// in time: an *Error of kind ErrTimeout that also matches the deadline's
// cause. Anything else is classified by what the provider answered.
func (c *Client) failed(ctx context.Context, err error, attempts int) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		cause := context.Cause(ctx)
		if !errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("llm: complete: %w", cause)
		}
		err = &Error{Kind: ErrTimeout, Attempts: attempts, Detail: "no answer before the deadline: " + err.Error(), Cause: cause}
	}
	var e *Error
	if !errors.As(err, &e) {
		err = classify(err, attempts)
	}
	if errors.As(err, &e) {
		e.Provider = c.provider
		e.Detail = c.scrub(e.Detail)
		c.log.Warn("completion failed", "status", e.Status, "kind", e.Kind, "attempts", e.Attempts, "detail", e.Detail)
	}
	return err
}

func (c *Client) complete(ctx context.Context, req openrouter.ChatCompletionRequest) (Response, error) {
	out, err := c.or.CreateChatCompletion(ctx, req)
	if err != nil {
		return Response{}, err
	}
	if len(out.Choices) == 0 {
		return Response{}, &Error{Kind: ErrBadResponse, Attempts: attemptsOf(ctx), Detail: "no choices"}
	}
	ch := out.Choices[0]
	return Response{Message: fromWire(ch.Message), FinishReason: string(ch.FinishReason), Usage: usageOf(out.Usage)}, nil
}

// stream reads the whole event stream and assembles one answer. The
// library's reader stops silently at lines it does not expect, so a stream
// without a finish reason is an error, not an answer.
func (c *Client) stream(ctx context.Context, req openrouter.ChatCompletionRequest) (Response, error) {
	req.Stream = true
	req.StreamOptions = &openrouter.StreamOptions{IncludeUsage: true}
	s, err := c.or.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return Response{}, err
	}
	// Read to the end even when giving up: the library's goroutine only
	// ends once its channel is drained.
	defer s.Close()
	var content strings.Builder
	var calls []ToolCall
	var finish string
	var usage Usage
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, err
		}
		if chunk.Usage != nil {
			usage = usageOf(chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			content.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				i := len(calls) - 1
				if tc.Index != nil {
					i = *tc.Index
				}
				for i >= len(calls) {
					calls = append(calls, ToolCall{})
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				calls[i].Name += tc.Function.Name
				calls[i].Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" && ch.FinishReason != openrouter.FinishReasonNull {
				finish = string(ch.FinishReason)
			}
		}
	}
	if ctx.Err() != nil {
		return Response{}, context.Cause(ctx)
	}
	if finish == "" {
		return Response{}, &Error{Kind: ErrBadResponse, Attempts: attemptsOf(ctx), Detail: "stream ended without a finish reason"}
	}
	return Response{Message: Message{Role: Assistant, Content: content.String(), ToolCalls: calls}, FinishReason: finish, Usage: usage}, nil
}

// keyLike matches API keys and bearer tokens a provider may echo back.
var keyLike = regexp.MustCompile(`(?i)\b(sk-[a-z0-9_-]{6,}|bearer\s+\S+)`)

// scrub removes the key, and anything that looks like a key, from text
// for the log.
func (c *Client) scrub(s string) string {
	if c.cfg.APIKey != "" {
		s = strings.ReplaceAll(s, c.cfg.APIKey, "[key]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

func usageOf(u *openrouter.Usage) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		CachedTokens: u.PromptTokenDetails.CachedTokens, CacheWriteTokens: u.PromptTokenDetails.CacheWriteTokens, Cost: u.Cost}
}

// toWire converts messages for the library. An empty tool-call arguments
// string is sent as "{}": the library drops empty arguments and providers
// reject a tool call without them. With markers, a message's CacheUpTo
// becomes a cache breakpoint (content).
func toWire(ms []Message, markers bool) []openrouter.ChatCompletionMessage {
	out := make([]openrouter.ChatCompletionMessage, len(ms))
	for i, m := range ms {
		w := openrouter.ChatCompletionMessage{Role: string(m.Role), Content: content(m, markers), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			w.ToolCalls = append(w.ToolCalls, openrouter.ToolCall{ID: tc.ID, Type: openrouter.ToolTypeFunction, Function: openrouter.FunctionCall{Name: tc.Name, Arguments: args}})
		}
		out[i] = w
	}
	return out
}

func fromWire(m openrouter.ChatCompletionMessage) Message {
	out := Message{Role: Assistant, Content: m.Content.Text}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out
}
