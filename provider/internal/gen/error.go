package gen

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrorKind says what went wrong on the provider's side. Every kind is extrinsic: it says
// nothing about the artifact being generated, so it never counts against an artifact's health.
type ErrorKind string

// The provider failure kinds.
const (
	// Unavailable: the provider could not be reached or failed (network, timeout, HTTP 5xx,
	// overloaded, a command that exited non-zero).
	Unavailable ErrorKind = "unavailable"
	// RateLimited: HTTP 429; RetryAfter says how long the provider asked to wait, if it did.
	RateLimited ErrorKind = "rate_limited"
	// BadAnswer: the provider answered, but the answer holds no usable Go code or the body
	// could not be decoded.
	BadAnswer ErrorKind = "bad_answer"
	// Auth: the credentials were refused (HTTP 401/403).
	Auth ErrorKind = "auth"
	// Misconfigured: no provider or key configured, an unknown provider spec, or a request the
	// provider rejects as invalid (unknown model, HTTP 400/404/422). The message says how to fix it.
	Misconfigured ErrorKind = "config"
)

// Valid reports whether k is a known error kind.
func (k ErrorKind) Valid() bool {
	switch k {
	case Unavailable, RateLimited, BadAnswer, Auth, Misconfigured:
		return true
	}
	return false
}

// Retriable reports whether asking again later can succeed without anyone changing anything.
func (k ErrorKind) Retriable() bool {
	return k == Unavailable || k == RateLimited || k == BadAnswer
}

// Error is every failure a provider returns, so callers branch with errors.As instead of
// parsing messages.
type Error struct {
	Kind       ErrorKind
	Provider   string        // "openai", "anthropic", "command", "replay"
	Status     int           // HTTP status when there was one
	RetryAfter time.Duration // what the provider asked us to wait, when it said
	Message    string        // what to do about it, for humans
	Err        error         // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("provider")
	if e.Provider != "" {
		b.WriteString(" " + e.Provider)
	}
	b.WriteString(": " + string(e.Kind))
	if e.Status != 0 || e.RetryAfter > 0 {
		b.WriteString(" (")
		if e.Status != 0 {
			fmt.Fprintf(&b, "HTTP %d", e.Status)
		}
		if e.RetryAfter > 0 {
			if e.Status != 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "retry after %s", e.RetryAfter)
		}
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retriable reports whether the same request may succeed later.
func (e *Error) Retriable() bool { return e.Kind.Retriable() }

// KindOf returns the kind of the *Error in err's chain, or "" when err is not a provider error.
func KindOf(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

// Errorf builds an *Error of the given kind for provider name with a formatted message.
func Errorf(kind ErrorKind, name string, format string, args ...any) *Error {
	return &Error{Kind: kind, Provider: name, Message: fmt.Sprintf(format, args...)}
}
