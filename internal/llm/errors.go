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
	// ErrTimeout: the provider did not answer in time — an attempt's
	// header timeout, still after retrying, or the caller's deadline.
	ErrTimeout = errors.New("provider timed out")
	// ErrUnavailable: the provider failed (5xx) or could not be reached,
	// still after retrying.
	ErrUnavailable = errors.New("provider unavailable")
	// ErrRejected: the provider refused the request (another 4xx, such as
	// an unknown model).
	ErrRejected = errors.New("request rejected")
	// ErrNoCredit: the account has no credit left (402).
	ErrNoCredit = errors.New("out of credit")
	// ErrBadResponse: the answer could not be used (no choice, a stream
	// that ended early).
	ErrBadResponse = errors.New("unusable response")
)

// Error is a failed completion: the provider's fault, classified once here
// at the boundary. Its text never contains the provider's body or the key;
// Detail is for the log only.
type Error struct {
	// Provider is the API's host (openrouter.ai), to name it to the owner.
	Provider string
	// Status is the HTTP status, 0 when none came back.
	Status int
	// Kind is one of the sentinels above.
	Kind error
	// Attempts is how many requests were sent.
	Attempts int
	// Detail is the provider's message, for the log. It may quote the
	// provider; never show it to the owner.
	Detail string
	// Cause is the context's cause when the caller's deadline ended the
	// completion (ErrTimeout), for errors.Is; nil otherwise.
	Cause error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm: %v (HTTP %d, %d attempts)", e.Kind, e.Status, e.Attempts)
	}
	return fmt.Sprintf("llm: %v (%d attempts)", e.Kind, e.Attempts)
}

// Unwrap is the Kind and, for a deadline, the context's cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// classify turns what go-openrouter returned into an *Error, using the
// library's own status accessor. A cancelled context is not the provider's
// fault and is returned as it is.
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
		e.Kind = ErrTimeout
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

// UserMessage is what the owner reads about a failed completion: the
// provider's fault, said as such, with what to do — short, without the
// provider's body or any key. It is "" for an error that is not an *Error
// (a stop, a failure of Fetch itself).
func UserMessage(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return ""
	}
	who := "The LLM provider"
	if e.Provider != "" {
		who += " (" + e.Provider + ")"
	}
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	switch {
	case errors.Is(err, ErrAuth):
		return who + " rejected Fetch's API key" + status + ". Check OPENROUTER_API_KEY and restart Fetch."
	case errors.Is(err, ErrNoCredit):
		return who + " says the account is out of credit" + status + ". Top it up, then try again."
	case errors.Is(err, ErrRateLimited):
		return who + " is rate limiting Fetch" + status + ", still after retrying. Try again in a minute or two."
	case errors.Is(err, ErrTimeout):
		return who + " did not answer in time. It is probably overloaded; try again later. If it keeps happening, try another model (FETCH_MODEL)."
	case errors.Is(err, ErrUnavailable):
		return who + " is failing right now" + status + ". That is on its side, not Fetch's; try again later."
	case errors.Is(err, ErrRejected):
		return who + " refused the request" + status + ". Check that FETCH_MODEL names a model it offers; the details are in Fetch's log."
	case errors.Is(err, ErrBadResponse):
		return who + " sent an incomplete or unusable answer. Try again; if it keeps happening, try another model (FETCH_MODEL)."
	}
	return who + " failed. Try again later; the details are in Fetch's log."
}
