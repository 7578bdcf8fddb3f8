package llm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

type attemptsKey struct{}

func attemptsOf(ctx context.Context) int {
	if n, ok := ctx.Value(attemptsKey{}).(*int); ok {
		return *n
	}
	return 0
}

// retrying is the HTTP client go-openrouter sends through: it retries a
// request that got a 429, a 5xx or a timeout, with exponential backoff and
// full jitter, honouring Retry-After. Retrying below the library lets it
// see the response headers, which the library's errors do not carry.
//
// Every attempt carries the request's context, and a wait selects on its
// Done: a cancelled context ends Do at once with the context's cause. A
// wait that would end after the context's deadline is not started; the
// last answer (429, 5xx, timeout) is returned for classification instead.
type retrying struct {
	next *http.Client
	cfg  Config
	log  *slog.Logger
}

func (r *retrying) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	counter, _ := ctx.Value(attemptsKey{}).(*int)
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		if counter != nil {
			*counter = attempt + 1
		}
		resp, err := r.next.Do(req)
		wait, retry := r.backoff(resp, err, attempt)
		if !retry || attempt >= r.cfg.MaxRetries || ctx.Err() != nil {
			return resp, err
		}
		if deadline, ok := ctx.Deadline(); ok && !time.Now().Add(wait).Before(deadline) {
			// Waiting would use up what is left: the answer we have is
			// the one to give.
			r.log.Info("not retrying completion: the wait would pass the deadline", "attempt", attempt+1, "wait", wait)
			return resp, err
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		r.log.Info("retrying completion", "attempt", attempt+1, "status", status, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// backoff decides whether an attempt is retried and after how long.
func (r *retrying) backoff(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		var netErr net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
			return r.jittered(attempt), true
		}
		return 0, false
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		if d > r.cfg.MaxDelay {
			return 0, false
		}
		return d, true
	}
	return r.jittered(attempt), true
}

func (r *retrying) jittered(attempt int) time.Duration {
	d := r.cfg.BaseDelay << attempt
	if d <= 0 || d > r.cfg.MaxDelay {
		d = r.cfg.MaxDelay
	}
	return r.cfg.Jitter(d)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
