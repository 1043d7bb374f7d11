package openai_test

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
	"github.com/artifactforge/forge/provider/internal/gen"
	"github.com/artifactforge/forge/provider/openai"
	"github.com/artifactforge/forge/provider/providertest"
)

var _ provider.Provider = (*openai.Provider)(nil)

const code = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"

// completion is a chat.completion body as the API sends it.
func completion(message string, finish string) string {
	return `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-test-2026-01-01",
  "choices": [{"index": 0, "message": ` + message + `, "logprobs": null, "finish_reason": "` + finish + `"}],
  "usage": {
    "prompt_tokens": 1200, "completion_tokens": 85, "total_tokens": 1285,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_test"
}`
}

func textMessage(content string) string {
	b, _ := json.Marshal(content)
	return `{"role": "assistant", "content": ` + string(b) + `, "refusal": null, "annotations": []}`
}

func toolMessage(code string) string {
	args, _ := json.Marshal(map[string]string{"code": code})
	argsStr, _ := json.Marshal(string(args))
	return `{"role": "assistant", "content": null, "refusal": null, "annotations": [],
  "tool_calls": [{"id": "call_abc123", "type": "function", "function": {"name": "submit_code", "arguments": ` + string(argsStr) + `}}]}`
}

func apiError(message, typ, code string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}})
	return string(b)
}

var req = provider.Request{Kind: provider.Generate, Role: "text", Method: "upper", Attempt: 1,
	System: "You write Go artifacts in package artifact.", Prompt: "Implement func Upper(s string) string."}

func newProvider(t *testing.T, srv *providertest.Server, mod func(*openai.Config)) *openai.Provider {
	t.Helper()
	cfg := openai.Config{
		APIKey:  "sk-test",
		BaseURL: srv.URL + "/v1",
		Model:   "gpt-test",
		Timeout: 5 * time.Second,
		Retry:   gen.Retry{MaxRetries: 0, BaseDelay: time.Millisecond, MaxDelay: time.Second},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := openai.New(cfg)
	require.NoError(t, err)
	return p
}

func TestGenerateSendsChatCompletion(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: completion(textMessage("Here is the code:\n\n```go\n"+code+"```\n"), "stop")})
	p := newProvider(t, srv, nil)

	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code)
	assert.Contains(t, a.Raw, "Here is the code:")
	assert.Equal(t, "gpt-test-2026-01-01", a.Model)
	assert.Equal(t, provider.Usage{InputTokens: 1200, OutputTokens: 85, CachedTokens: 1024}, a.Usage)

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
	assert.Contains(t, r.Header.Get("Content-Type"), "application/json")
	body := r.JSON(t)
	assert.Equal(t, "gpt-test", body["model"])
	assert.EqualValues(t, gen.DefaultMaxTokens, body["max_tokens"], "non-OpenAI servers get max_tokens")
	assert.NotContains(t, body, "max_completion_tokens")
	assert.NotContains(t, body, "tools")
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": req.System},
		map[string]any{"role": "user", "content": req.Prompt},
	}, body["messages"])
}

func TestGenerateRequestOverridesModelAndMaxTokens(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: completion(textMessage("```go\n"+code+"```"), "stop")})
	p := newProvider(t, srv, nil)
	r := req
	r.Model, r.MaxTokens = "other-model", 777
	_, err := p.Generate(context.Background(), r)
	require.NoError(t, err)
	body := srv.Requests()[0].JSON(t)
	assert.Equal(t, "other-model", body["model"])
	assert.EqualValues(t, 777, body["max_tokens"])
}

func TestGenerateToolCall(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: completion(toolMessage(strings.Replace(code, "package artifact", "package main", 1)), "tool_calls")})
	p := newProvider(t, srv, func(c *openai.Config) { c.CodeTool = true })

	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code, "code taken from the tool call and its package renamed")
	assert.Contains(t, a.Raw, `"code"`)

	body := srv.Requests()[0].JSON(t)
	tools, _ := body["tools"].([]any)
	require.Len(t, tools, 1)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, "submit_code", fn["name"])
	assert.Equal(t, []any{"code"}, fn["parameters"].(map[string]any)["required"])
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": "submit_code"}}, body["tool_choice"])
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
			reply: providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "20", "X-Ratelimit-Remaining-Tokens": "0"},
				Body: apiError("Rate limit reached for gpt-test on tokens per min (TPM): Limit 30000, Used 30000.", "tokens", "rate_limit_exceeded")},
			kind: provider.RateLimited, status: 429, retryAfter: 20 * time.Second,
			contains: []string{"rate_limited (HTTP 429, retry after 20s)", "Rate limit reached"},
		},
		{
			name:  "401 bad key",
			reply: providertest.Reply{Status: 401, Body: apiError("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key")},
			kind:  provider.Auth, status: 401,
			contains: []string{"Incorrect API key", "OPENAI_API_KEY"},
		},
		{
			name:  "500",
			reply: providertest.Reply{Status: 500, Body: apiError("The server had an error while processing your request. Sorry about that!", "server_error", "")},
			kind:  provider.Unavailable, status: 500,
			contains: []string{"HTTP 500", "server had an error"},
		},
		{
			name:  "502 html from a proxy",
			reply: providertest.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
			kind:  provider.Unavailable, status: 502,
		},
		{
			name:  "404 unknown model on ollama",
			reply: providertest.Reply{Status: 404, Body: apiError(`model "llama9" not found, try pulling it first`, "api_error", "")},
			kind:  provider.Misconfigured, status: 404,
			contains: []string{"not found, try pulling it first", `check FORGE_MODEL="gpt-test"`},
		},
		{
			name:     "malformed body",
			reply:    providertest.Reply{Body: `{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "mess`},
			kind:     provider.BadAnswer,
			status:   200,
			contains: []string{"could not decode the response body"},
		},
		{
			name:     "no choices",
			reply:    providertest.Reply{Body: `{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": []}`},
			kind:     provider.BadAnswer,
			contains: []string{"no choices"},
		},
		{
			name:     "answer without code",
			reply:    providertest.Reply{Body: completion(textMessage("I would use strings.ToUpper for this."), "stop")},
			kind:     provider.BadAnswer,
			contains: []string{"strings.ToUpper"},
			errIs:    provider.ErrNoCode,
		},
		{
			name:     "answer cut off at max tokens",
			reply:    providertest.Reply{Body: completion(textMessage("Let me think about the edge cases first. Unicode"), "length")},
			kind:     provider.BadAnswer,
			contains: []string{"cut off at 4096 tokens; raise FORGE_MAX_TOKENS"},
		},
		{
			name:     "refusal",
			reply:    providertest.Reply{Body: completion(`{"role": "assistant", "content": null, "refusal": "I can't help with that."}`, "stop")},
			kind:     provider.BadAnswer,
			contains: []string{"refused: I can't help with that."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, tt.reply)
			p := newProvider(t, srv, nil)
			_, err := p.Generate(context.Background(), req)
			providertest.ExpectError(t, err, "openai", providertest.WantError{Kind: tt.kind, Status: tt.status,
				RetryAfter: tt.retryAfter, Contains: tt.contains, Is: tt.errIs})
			assert.Len(t, srv.Requests(), 1, "retries are off in this test")
		})
	}
}

func TestGenerateRetriesHonouringRetryAfter(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Status: 429, Header: map[string]string{"Retry-After-Ms": "5"}, Body: apiError("slow down", "requests", "rate_limit_exceeded")},
		providertest.Reply{Status: 503, Body: apiError("overloaded", "server_error", "")},
		providertest.Reply{Body: completion(textMessage("```go\n"+code+"```"), "stop")},
	)
	var waits []time.Duration
	p := newProvider(t, srv, func(c *openai.Config) {
		c.Retry = gen.Retry{MaxRetries: 2, BaseDelay: 3 * time.Millisecond, MaxDelay: time.Second,
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	})
	a, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, code, a.Code)
	assert.Len(t, srv.Requests(), 3)
	require.Len(t, waits, 2)
	assert.Equal(t, 5*time.Millisecond, waits[0], "the server's Retry-After-Ms")
	assert.LessOrEqual(t, waits[1], 6*time.Millisecond, "backoff after a 5xx")
}

func TestGenerateStopsWhenRetryAfterIsTooLong(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "120"}, Body: apiError("quota", "requests", "rate_limit_exceeded")},
	)
	p := newProvider(t, srv, func(c *openai.Config) {
		c.Retry = gen.Retry{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Second,
			Sleep: func(context.Context, time.Duration) error { t.Fatal("must not wait"); return nil }}
	})
	_, err := p.Generate(context.Background(), req)
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, provider.RateLimited, pe.Kind)
	assert.Equal(t, 2*time.Minute, pe.RetryAfter)
	assert.Len(t, srv.Requests(), 1)
}

func TestGenerateDoesNotRetryAuth(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 401, Body: apiError("bad key", "invalid_request_error", "invalid_api_key")})
	p := newProvider(t, srv, func(c *openai.Config) { c.Retry.MaxRetries = 3 })
	_, err := p.Generate(context.Background(), req)
	assert.Equal(t, provider.Auth, provider.KindOf(err))
	assert.Len(t, srv.Requests(), 1)
}

func TestGenerateTimeout(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Hang: true})
	p := newProvider(t, srv, func(c *openai.Config) { c.Timeout = 200 * time.Millisecond })
	_, err := p.Generate(context.Background(), req)
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestGenerateConnectionRefused(t *testing.T) {
	srv := providertest.New(t)
	p := newProvider(t, srv, nil)
	srv.Close()
	_, err := p.Generate(context.Background(), req)
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, provider.Unavailable, pe.Kind)
	assert.True(t, pe.Retriable())
}

func TestOfficialEndpointUsesMaxCompletionTokens(t *testing.T) {
	// The official host is recognised by name; route it to the test server.
	srv := providertest.New(t, providertest.Reply{Body: completion(textMessage("```go\n"+code+"```"), "stop")})
	p, err := openai.New(openai.Config{APIKey: "sk-test", HTTPClient: &http.Client{Transport: redirect{srv.URL}}})
	require.NoError(t, err)
	assert.Equal(t, openai.DefaultModel, p.Model())
	_, err = p.Generate(context.Background(), req)
	require.NoError(t, err)
	body := srv.Requests()[0].JSON(t)
	assert.EqualValues(t, gen.DefaultMaxTokens, body["max_completion_tokens"])
	assert.NotContains(t, body, "max_tokens")
	assert.Equal(t, openai.DefaultModel, body["model"])
}

// redirect sends every request to the test server, keeping its path.
type redirect struct{ base string }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *req.URL
	target, _ := http.NewRequest(req.Method, r.base+u.Path, req.Body)
	target = target.WithContext(req.Context())
	target.Header = req.Header.Clone()
	return http.DefaultTransport.RoundTrip(target)
}

func TestProcessEnvironmentDoesNotLeakIn(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-process-env")
	srv := providertest.New(t, providertest.Reply{Body: completion(textMessage("```go\n"+code+"```"), "stop")})
	p := newProvider(t, srv, func(c *openai.Config) { c.APIKey = "" })
	_, err := p.Generate(context.Background(), req)
	require.NoError(t, err, "the configured base URL wins over the process environment")
	assert.Equal(t, "Bearer unused", srv.Requests()[0].Header.Get("Authorization"), "only the env func given to Open counts")
}
