// Package llm is Fetch's client for an OpenAI-compatible chat completions
// API — OpenRouter by default — built on github.com/revrost/go-openrouter.
//
// It speaks in its own small types (Message, ToolCall, Tool, Response) so
// that nothing above it depends on the library. Requests that fail with 429,
// a 5xx or a timeout are retried with exponential backoff and full jitter,
// at most MaxRetries times, honouring Retry-After; other 4xx answers are not
// retried. Failures come back as *Error, whose text carries the status and
// a short classification but never the provider's body or the key:
// UserMessage turns one into what the owner reads.
//
// llm imports nothing of Fetch's own. A *Client is safe for concurrent use
// and owns no goroutines.
package llm
