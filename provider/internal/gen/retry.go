package gen

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry is the one retry policy of the HTTP providers (each attempt is one HTTP request): a
// few attempts, honouring the provider's Retry-After, and never waiting longer than MaxDelay
// at once, so one provider call stays bounded.
type Retry struct {
	MaxRetries int           // attempts after the first; 0 means none
	BaseDelay  time.Duration // first backoff when the provider gives no Retry-After
	MaxDelay   time.Duration // longest single wait; a longer Retry-After ends the retries at once
	// Sleep waits d or until ctx is done; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// RetryEvent is one retry about to happen: retry Retry of Of, after Wait, because of Err.
type RetryEvent struct {
	Retry, Of int
	Wait      time.Duration
	Err       error
}

type retryNotifyKey struct{}

// WithRetryNotify returns ctx carrying fn, which Retry.Do calls before each retry it makes under
// that context (for a command line's -v, a server's log).
func WithRetryNotify(ctx context.Context, fn func(RetryEvent)) context.Context {
	return context.WithValue(ctx, retryNotifyKey{}, fn)
}

// DefaultRetry is used when a provider is configured without an explicit policy.
var DefaultRetry = Retry{MaxRetries: 2, BaseDelay: 500 * time.Millisecond, MaxDelay: 10 * time.Second}

// Do calls attempt until it succeeds, fails with an error that is not Unavailable or
// RateLimited, the retries run out, ctx is done, or the provider asks to wait longer than
// MaxDelay. It returns the last answer and error.
func (r Retry) Do(ctx context.Context, attempt func(context.Context) (Answer, error)) (Answer, error) {
	for n := 0; ; n++ {
		a, err := attempt(ctx)
		if err == nil || n >= r.MaxRetries || ctx.Err() != nil {
			return a, err
		}
		var pe *Error
		if !errors.As(err, &pe) || (pe.Kind != Unavailable && pe.Kind != RateLimited) {
			return a, err
		}
		wait := r.backoff(n)
		if pe.RetryAfter > 0 {
			if r.MaxDelay > 0 && pe.RetryAfter > r.MaxDelay {
				return a, err
			}
			wait = pe.RetryAfter
		}
		if notify, _ := ctx.Value(retryNotifyKey{}).(func(RetryEvent)); notify != nil {
			notify(RetryEvent{Retry: n + 1, Of: r.MaxRetries, Wait: wait, Err: err})
		}
		if serr := r.sleep(ctx, wait); serr != nil {
			return a, err
		}
	}
}

func (r Retry) backoff(n int) time.Duration {
	d := r.BaseDelay << n
	if d <= 0 || (r.MaxDelay > 0 && d > r.MaxDelay) {
		d = r.MaxDelay
	}
	if d > 4 {
		d -= time.Duration(rand.Int64N(int64(d / 4))) // jitter so concurrent callers spread out
	}
	return d
}

func (r Retry) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryAfter reads how long a response asks the client to wait: Retry-After-Ms, then
// Retry-After in seconds or as an HTTP date. It returns 0 when the response does not say.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 && s < 1e9 {
				return time.Duration(s * float64(time.Second))
			}
			return 0
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := time.Until(t); d > 0 {
				return d
			}
		}
	}
	return 0
}

// KindForStatus maps an HTTP error status to the failure kind callers branch on.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Auth
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return Unavailable
	case status >= 400:
		return Misconfigured
	}
	return Unavailable
}

// StatusError builds the *Error for an HTTP error response. hint tells the user what to check
// for auth and configuration failures.
func StatusError(name string, status int, h http.Header, message string, cause error, hint string) *Error {
	e := &Error{Kind: KindForStatus(status), Provider: name, Status: status, RetryAfter: RetryAfter(h), Message: message, Err: cause}
	if (e.Kind == Auth || e.Kind == Misconfigured) && hint != "" {
		if e.Message != "" {
			e.Message += "; "
		}
		e.Message += hint
	}
	return e
}

// TransportError wraps a failure that produced no HTTP response (DNS, refused connection,
// TLS, timeout) as Unavailable, keeping the cause so errors.Is(err, context.DeadlineExceeded)
// still works.
func TransportError(name string, err error) *Error {
	return &Error{Kind: Unavailable, Provider: name, Err: err}
}
