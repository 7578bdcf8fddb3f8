package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	openrouter "github.com/revrost/go-openrouter"
)

// Sentinels for branching on an *Error with errors.Is.
var (
	// ErrAuth: the provider rejected the key (401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrRateLimited: too many requests (429), still after retrying.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable: the provider failed (5xx) or did not answer in time,
	// still after retrying.
	ErrUnavailable = errors.New("provider unavailable")
	// ErrRejected: the provider refused the request (another 4xx).
	ErrRejected = errors.New("request rejected")
	// ErrNoCredit: the account has no credit left (402).
	ErrNoCredit = errors.New("out of credit")
	// ErrBadResponse: the answer could not be used (no choice, a stream
	// that ended early).
	ErrBadResponse = errors.New("unusable response")
)

// Error is a failed completion. Its text never contains the provider's
// body or the key; Detail is for the log only.
type Error struct {
	// Status is the HTTP status, 0 when none came back.
	Status int
	// Kind is one of the sentinels above.
	Kind error
	// Attempts is how many requests were sent.
	Attempts int
	// Detail is the provider's message, for the log. It may quote the
	// provider; never show it to the owner.
	Detail string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %v (HTTP %d, %d attempts)", e.Kind, e.Status, e.Attempts)
	}
	return fmt.Sprintf("llm: %v (%d attempts)", e.Kind, e.Attempts)
}

func (e *Error) Unwrap() error { return e.Kind }

// classify turns what go-openrouter returned into an *Error, using the
// library's own status accessor.
func classify(err error, attempts int) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	status, _ := openrouter.HTTPStatusCode(err)
	e := &Error{Status: status, Attempts: attempts, Detail: detail(err)}
	var netErr net.Error
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusPaymentRequired:
		e.Kind = ErrNoCredit
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
	case status >= 500:
		e.Kind = ErrUnavailable
	case status >= 400:
		e.Kind = ErrRejected
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		e.Kind = ErrUnavailable
		e.Detail = "timeout: " + e.Detail
	default:
		e.Kind = ErrUnavailable
	}
	return e
}

// detail is the provider's own message, bounded, for the log.
func detail(err error) string {
	var api *openrouter.APIError
	if errors.As(err, &api) {
		return bounded(api.Message)
	}
	var req *openrouter.RequestError
	if errors.As(err, &req) {
		return bounded(fmt.Sprintf("HTTP %d", req.HTTPStatusCode))
	}
	return bounded(err.Error())
}

func bounded(s string) string {
	const max = 300
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// UserMessage is what the owner reads about a failed completion: short,
// actionable, without the provider's body or any key.
func UserMessage(err error) string {
	switch {
	case errors.Is(err, ErrAuth):
		return "The LLM provider rejected Fetch's API key. Check OPENROUTER_API_KEY and restart Fetch."
	case errors.Is(err, ErrNoCredit):
		return "The LLM provider says the account is out of credit. Top it up and try again."
	case errors.Is(err, ErrRateLimited):
		return "The LLM provider is rate limiting Fetch right now. Try again in a minute."
	case errors.Is(err, ErrUnavailable):
		return "The LLM provider is not answering properly right now. Try again in a moment."
	case errors.Is(err, ErrRejected):
		return "The LLM provider refused the request. The details are in Fetch's log; check FETCH_MODEL and try again."
	case errors.Is(err, ErrBadResponse):
		return "The LLM provider sent an answer Fetch could not use. Try again."
	}
	return ""
}
