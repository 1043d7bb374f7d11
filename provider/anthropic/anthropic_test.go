package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/anthropic"
	"github.com/artifactforge/forge/provider/internal/gen"
	"github.com/artifactforge/forge/provider/providertest"
)

var _ provider.Provider = (*anthropic.Provider)(nil)

const code = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"

// message is a Messages API response body as the API sends it.
func message(stopReason string, blocks ...string) string {
	return `{
  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "type": "message",
  "role": "assistant",
  "model": "claude-test-20260101",
  "content": [` + strings.Join(blocks, ",") + `],
  "stop_reason": "` + stopReason + `",
  "stop_sequence": null,
  "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1500, "output_tokens": 90, "service_tier": "standard"}
}`
}

func text(s string) string {
	b, _ := json.Marshal(s)
	return `{"type": "text", "text": ` + string(b) + `}`
}

func toolUse(code string) string {
	in, _ := json.Marshal(map[string]string{"code": code})
	return `{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "submit_code", "input": ` + string(in) + `}`
}

func apiError(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"})
	return string(b)
}

var req = provider.Request{Kind: provider.Repair, Role: "text", Method: "upper", Attempt: 1,
	System: "You write Go artifacts in package artifact.", Prompt: "Fix: Upper returns lower case.\n\npackage artifact ..."}

func newProvider(t *testing.T, srv *providertest.Server, mod func(*anthropic.Config)) *anthropic.Provider {
	t.Helper()
	cfg := anthropic.Config{
		APIKey:  "sk-ant-test",
		BaseURL: srv.URL,
		Model:   "claude-test",
		Timeout: 5 * time.Second,
		Retry:   gen.Retry{MaxRetries: 0, BaseDelay: time.Millisecond, MaxDelay: time.Second},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := anthropic.New(cfg)
	require.NoError(t, err)
	return p
}

func TestGenerateSendsMessagesRequest(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{
		Header: map[string]string{"Request-Id": "req_1"},
		Body:   message("end_turn", text("The bug is ToLower. Fixed:\n\n```go\n"+code+"```")),
	})
	p := newProvider(t, srv, nil)

	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code)
	assert.Contains(t, a.Raw, "The bug is ToLower.")
	assert.Equal(t, "claude-test-20260101", a.Model)
	assert.Equal(t, provider.Usage{InputTokens: 1540, OutputTokens: 90, CachedTokens: 1500}, a.Usage)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/messages", r.Path)
	// This SDK version sends the API key as a bearer token.
	assert.Equal(t, "Bearer sk-ant-test", r.Header.Get("Authorization"))
	assert.NotEmpty(t, r.Header.Get("Anthropic-Version"))
	body := r.JSON(t)
	assert.Equal(t, "claude-test", body["model"])
	assert.EqualValues(t, gen.DefaultMaxTokens, body["max_tokens"])
	assert.Equal(t, []any{map[string]any{
		"type": "text", "text": req.System, "cache_control": map[string]any{"type": "ephemeral"},
	}}, body["system"], "the stable part is one cacheable system block")
	assert.Equal(t, []any{map[string]any{
		"role": "user", "content": []any{map[string]any{"type": "text", "text": req.Prompt}},
	}}, body["messages"])
	assert.NotContains(t, body, "tools")
}

func TestGenerateWithoutSystemOmitsIt(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: message("end_turn", text("```go\n"+code+"```"))})
	p := newProvider(t, srv, nil)
	r := req
	r.System, r.Model, r.MaxTokens = "", "claude-other", 999
	_, err := p.Generate(context.Background(), r)
	require.NoError(t, err)
	body := srv.Requests()[0].JSON(t)
	assert.NotContains(t, body, "system", "an empty text block would be rejected")
	assert.Equal(t, "claude-other", body["model"])
	assert.EqualValues(t, 999, body["max_tokens"])
}

func TestGenerateToolUse(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: message("tool_use",
		text("I'll submit the fixed file."),
		toolUse(strings.Replace(code, "package artifact", "package main", 1)))})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.CodeTool = true })

	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code)
	assert.Contains(t, a.Raw, "I'll submit the fixed file.")
	assert.Contains(t, a.Raw, `"code"`)

	body := srv.Requests()[0].JSON(t)
	tools, _ := body["tools"].([]any)
	require.Len(t, tools, 1)
	tool := tools[0].(map[string]any)
	assert.Equal(t, "submit_code", tool["name"])
	schema := tool["input_schema"].(map[string]any)
	assert.Equal(t, "object", schema["type"])
	assert.Equal(t, []any{"code"}, schema["required"])
	assert.Equal(t, map[string]any{"type": "tool", "name": "submit_code"}, body["tool_choice"])
}

func TestGenerateFailures(t *testing.T) {
	tests := []struct {
		name       string
		reply      providertest.Reply
		kind       provider.ErrorKind
		status     int
		retryAfter time.Duration
		contains   []string
		errIs      error
	}{
		{
			name: "429 with retry-after",
			reply: providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7", "Anthropic-Ratelimit-Tokens-Remaining": "0"},
				Body: apiError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")},
			kind: provider.RateLimited, status: 429, retryAfter: 7 * time.Second,
			contains: []string{"rate_limited (HTTP 429, retry after 7s)", "rate_limit_error", "per-minute rate limit"},
		},
		{
			name:  "401",
			reply: providertest.Reply{Status: 401, Body: apiError("authentication_error", "invalid x-api-key")},
			kind:  provider.Auth, status: 401,
			contains: []string{"invalid x-api-key", "ANTHROPIC_API_KEY"},
		},
		{
			name:  "529 overloaded",
			reply: providertest.Reply{Status: 529, Body: apiError("overloaded_error", "Overloaded")},
			kind:  provider.Unavailable, status: 529,
			contains: []string{"overloaded_error"},
		},
		{
			name:  "500",
			reply: providertest.Reply{Status: 500, Body: apiError("api_error", "Internal server error")},
			kind:  provider.Unavailable, status: 500,
		},
		{
			name:  "404 unknown model",
			reply: providertest.Reply{Status: 404, Body: apiError("not_found_error", "model: claude-test")},
			kind:  provider.Misconfigured, status: 404,
			contains: []string{`check FORGE_MODEL="claude-test"`},
		},
		{
			name:  "400 invalid request",
			reply: providertest.Reply{Status: 400, Body: apiError("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")},
			kind:  provider.Misconfigured, status: 400,
			contains: []string{"prompt is too long"},
		},
		{
			name:     "malformed body",
			reply:    providertest.Reply{Body: `{"id": "msg_1", "type": "message", "content": [{"type": "text", "te`},
			kind:     provider.BadAnswer,
			status:   200,
			contains: []string{"could not decode the response body"},
		},
		{
			name:     "answer without code",
			reply:    providertest.Reply{Body: message("end_turn", text("You could call strings.ToUpper."))},
			kind:     provider.BadAnswer,
			contains: []string{"strings.ToUpper"},
			errIs:    provider.ErrNoCode,
		},
		{
			name:     "cut off at max_tokens",
			reply:    providertest.Reply{Body: message("max_tokens", text("First, consider the Unicode cases"))},
			kind:     provider.BadAnswer,
			contains: []string{"cut off at 4096 tokens"},
		},
		{
			name:     "empty content",
			reply:    providertest.Reply{Body: message("end_turn")},
			kind:     provider.BadAnswer,
			contains: []string{"no text or tool_use content"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, tt.reply)
			p := newProvider(t, srv, nil)
			_, err := p.Generate(context.Background(), req)
			providertest.ExpectError(t, err, "anthropic", providertest.WantError{Kind: tt.kind, Status: tt.status,
				RetryAfter: tt.retryAfter, Contains: tt.contains, Is: tt.errIs})
			assert.Len(t, srv.Requests(), 1, "retries are off in this test")
		})
	}
}

func TestGenerateRetriesOverloaded(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Status: 529, Header: map[string]string{"Retry-After": "1"}, Body: apiError("overloaded_error", "Overloaded")},
		providertest.Reply{Body: message("end_turn", text("```go\n"+code+"```"))},
	)
	var waits []time.Duration
	p := newProvider(t, srv, func(c *anthropic.Config) {
		c.Retry = gen.Retry{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Second,
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	})
	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code)
	assert.Equal(t, []time.Duration{time.Second}, waits)
	assert.Len(t, srv.Requests(), 2)
}

func TestGenerateRetriesRunOut(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Status: 503, Body: apiError("api_error", "unavailable")},
		providertest.Reply{Status: 503, Body: apiError("api_error", "unavailable")},
	)
	p := newProvider(t, srv, func(c *anthropic.Config) {
		c.Retry = gen.Retry{MaxRetries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	})
	_, err := p.Generate(context.Background(), req)
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
	assert.Len(t, srv.Requests(), 2)
}

func TestGenerateTimeout(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Hang: true})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.Timeout = 200 * time.Millisecond })
	_, err := p.Generate(context.Background(), req)
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestAuthToken(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: message("end_turn", text("```go\n"+code+"```"))})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.APIKey, c.AuthToken = "", "tok-123" })
	_, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	r := srv.Requests()[0]
	assert.Equal(t, "Bearer tok-123", r.Header.Get("Authorization"))
	assert.Empty(t, r.Header.Get("X-Api-Key"))
}

func TestNewIgnoresProcessEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "from-process-env")
	_, err := anthropic.New(anthropic.Config{})
	assert.Equal(t, provider.Misconfigured, provider.KindOf(err), "only the env func given to Open counts")
}
