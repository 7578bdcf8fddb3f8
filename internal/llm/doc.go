// Package llm is Fetch's client for an OpenAI-compatible chat completions
// API — OpenRouter by default — built on github.com/revrost/go-openrouter.
//
// It speaks in its own small types (Message, ToolCall, Tool, Response) so
// that nothing above it depends on the library. Requests that fail with 429,
// a 5xx or a timeout are retried with exponential backoff and full jitter,
// at most MaxRetries times, honouring Retry-After; other 4xx answers are not
// retried.
//
// The context bounds everything: every attempt is sent with it, backoff
// waits select on it, and a wait that would outlast its deadline is not
// started. A cancelled context (the owner's /stop) ends Complete at once
// with the context's cause, which is never dressed up as a provider
// failure.
//
// Everything else that goes wrong is the provider's fault and is classified
// once, here, into an *Error whose Kind is a sentinel (ErrAuth, ErrTimeout,
// ErrRateLimited, ErrUnavailable, ErrRejected, ErrNoCredit, ErrBadResponse);
// a deadline that passed is ErrTimeout. Its text carries the status and the
// classification but never the provider's body or the key, and UserMessage
// turns it into what the owner reads: the provider named, and what to do.
//
// A message's CacheUpTo marks where a cacheable prefix of the request
// ends. For models whose providers cache only what is marked
// (TakesCacheMarkers: anthropic/… and google/gemini…, after OpenRouter's
// prompt-caching guide) it is sent as cache_control {"type":"ephemeral"}
// on a text part; other providers cache prefixes by themselves and get
// the plain text. Usage carries the cached and cache-write tokens the
// provider reports (usage.prompt_tokens_details), and Request.MaxTokens
// is sent as max_tokens.
//
// llm imports nothing of Fetch's own. A *Client is safe for concurrent use
// and owns no goroutines (go-openrouter's stream reader has one per stream,
// which ends when the stream is read to its end, as Complete always does).
package llm
