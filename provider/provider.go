package provider

import (
	"context"

	"github.com/artifactforge/forge/provider/internal/gen"
)

// Provider writes artifact code. Forge holds one per process and calls it from many
// goroutines, so implementations are safe for concurrent use.
type Provider interface {
	// Generate answers one request. On failure the error is an *Error; when the model answered
	// but no code could be healed out of it, the Answer (Raw, Usage) is returned alongside a
	// BadAnswer error so the caller can feed the answer back and count its tokens.
	Generate(ctx context.Context, req Request) (Answer, error)
	// Name is the provider's kind ("openai", "anthropic", "command", "replay") for events.
	Name() string
}

// Request is one question to a generator:
//
//	Kind      Generate or Repair
//	Role      the role, e.g. "text"
//	Method    the method, e.g. "upper"
//	Attempt   1-based number of the request within one forge call (1..n); 0: not numbered
//	System    the stable part of the prompt (artifact rules, host API, sandbox gaps), cacheable
//	Prompt    contract and signature; for a repair also the failing code and the error
//	Model     overrides the provider's configured model when set
//	MaxTokens overrides the configured answer size when > 0
type Request = gen.Request

// Answer is a generator's reply: Code (healed: one Go file, package artifact), Raw (what the
// model produced, for events and feedback), Model (as reported by the provider) and Usage.
type Answer = gen.Answer

// Usage is the tokens a provider reported: InputTokens counts every prompt token, cached or
// not; CachedTokens is the part read from the provider's prompt cache; OutputTokens the answer.
type Usage = gen.Usage

// Kind is the request kind: Generate or Repair.
type Kind = gen.Kind

// The request kinds.
const (
	Generate = gen.Generate
	Repair   = gen.Repair
)

// Error is every provider failure; branch on it with errors.As. Fields: Kind, Provider (its
// name), Status (HTTP status, if any), RetryAfter (what the provider asked to wait, if it
// said), Message (what to do about it) and Err (the cause). Retriable() is true for
// unavailable, rate_limited and bad_answer.
type Error = gen.Error

// RetryEvent is one retry an HTTP provider is about to make: retry Retry of Of, after Wait,
// because of Err.
type RetryEvent = gen.RetryEvent

// WithRetryNotify returns ctx carrying fn, called before each retry a provider makes for a
// Generate under that context.
func WithRetryNotify(ctx context.Context, fn func(RetryEvent)) context.Context {
	return gen.WithRetryNotify(ctx, fn)
}

// ErrorKind classifies a provider failure; every kind is extrinsic.
type ErrorKind = gen.ErrorKind

// The provider failure kinds.
const (
	Unavailable   = gen.Unavailable
	RateLimited   = gen.RateLimited
	BadAnswer     = gen.BadAnswer
	Auth          = gen.Auth
	Misconfigured = gen.Misconfigured
)

// ErrNoCode is wrapped by Heal's error (and by BadAnswer errors) when an answer holds no Go code.
var ErrNoCode = gen.ErrNoCode

// KindOf returns the kind of the provider *Error in err's chain, or "" for other errors, so a
// classifier can tell provider failures (always extrinsic) from everything else.
func KindOf(err error) ErrorKind { return gen.KindOf(err) }

// Heal extracts one Go file in package artifact from a model's raw answer: the best fenced
// block, a tool call's {"code": ...} argument, or unfenced text that parses as Go. The error
// wraps ErrNoCode when there is none.
func Heal(raw string) (string, error) { return gen.Heal(raw) }
