package openai_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/openai"
	"github.com/artifactforge/forge/provider/providertest"
)

// The tests in this file compare the provider with recorded wire formats in testdata: the
// requests openai-go sent for forge before forge dropped it, and responses and error envelopes
// in the shape the API documents (each file says where it comes from).

// TestRequestMatchesSDKRecording: forge sends what openai-go sent: the same path under the base
// URL, the same body (model, messages, max_tokens or max_completion_tokens, tools, tool_choice)
// and the same credentials and OpenAI-Organization/-Project headers.
func TestRequestMatchesSDKRecording(t *testing.T) {
	tests := []struct {
		fixture  string
		official bool
		codeTool bool
	}{
		{fixture: "sdk_request_local.json"},
		{fixture: "sdk_request_local_tool.json", codeTool: true},
		{fixture: "sdk_request_official.json", official: true},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			want := providertest.LoadFixture(t, "testdata/"+tt.fixture)
			srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text.json").Reply())
			env := map[string]string{
				"OPENAI_API_KEY": "sk-test", "OPENAI_ORG_ID": "org-test", "OPENAI_PROJECT_ID": "proj_test",
				"FORGE_MODEL": "gpt-test", "OPENAI_BASE_URL": srv.URL + "/v1",
			}
			if tt.official {
				delete(env, "FORGE_MODEL")
				delete(env, "OPENAI_BASE_URL")
			}
			if tt.codeTool {
				env["FORGE_CODE_TOOL"] = "1"
			}
			cfg, err := openai.FromEnv(func(k string) string { return env[k] })
			require.NoError(t, err)
			if tt.official {
				cfg.HTTPClient = &http.Client{Transport: redirect{srv.URL}}
			}
			p, err := openai.New(cfg)
			require.NoError(t, err)
			_, err = p.Generate(context.Background(), req)
			require.NoError(t, err)

			got := srv.Requests()[0]
			assert.Equal(t, want.Method, got.Method)
			assert.Equal(t, want.Path, got.Path)
			assert.Equal(t, want.JSON(t), got.JSON(t), "the body openai-go sent")
			for _, h := range []string{"Authorization", "OpenAI-Organization", "OpenAI-Project", "Content-Type", "Accept"} {
				assert.Equal(t, want.Header[http.CanonicalHeaderKey(h)], got.Header.Get(h), h)
			}
		})
	}
}

// TestRecordedResponses: answers, usage (with cached prompt tokens) and the API's error
// envelopes and rate-limit headers are read as the API sends them.
func TestRecordedResponses(t *testing.T) {
	tests := []struct {
		fixture  string
		codeTool bool
		model    string
		usage    provider.Usage
		err      *providertest.WantError
	}{
		{fixture: "response_text.json", model: "gpt-5.4-mini-2026-03-17", usage: provider.Usage{InputTokens: 1200, OutputTokens: 85, CachedTokens: 1024}},
		{fixture: "response_tool_calls.json", codeTool: true, model: "gpt-5.4-mini-2026-03-17", usage: provider.Usage{InputTokens: 1310, OutputTokens: 61}},
		{fixture: "error_429.json", err: &providertest.WantError{Kind: provider.RateLimited, Status: 429, RetryAfter: 2 * time.Second,
			Contains: []string{"rate_limited (HTTP 429, retry after 2s)", "Rate limit reached for gpt-5.4-mini"}}},
		{fixture: "error_429_quota.json", err: &providertest.WantError{Kind: provider.RateLimited, Status: 429,
			Contains: []string{"exceeded your current quota"}}},
		{fixture: "error_401.json", err: &providertest.WantError{Kind: provider.Auth, Status: 401,
			Contains: []string{"Incorrect API key provided", "OPENAI_API_KEY"}}},
		{fixture: "error_404_model.json", err: &providertest.WantError{Kind: provider.Misconfigured, Status: 404,
			Contains: []string{"does not exist or you do not have access", `check FORGE_MODEL="gpt-test"`}}},
		{fixture: "error_500.json", err: &providertest.WantError{Kind: provider.Unavailable, Status: 500,
			Contains: []string{"The server had an error"}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := providertest.New(t, providertest.LoadFixture(t, "testdata/"+tt.fixture).Reply())
			p := newProvider(t, srv, func(c *openai.Config) { c.CodeTool = tt.codeTool })
			a, err := p.Generate(context.Background(), req)
			if tt.err != nil {
				providertest.ExpectError(t, err, openai.Name, *tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, code, a.Code)
			assert.Equal(t, tt.model, a.Model)
			assert.Equal(t, tt.usage, a.Usage)
		})
	}
}

// TestBaseURLJoin: the endpoint is chat/completions under the base URL, with or without a
// trailing slash, exactly where openai-go put it (no /v1 is added).
func TestBaseURLJoin(t *testing.T) {
	for base, path := range map[string]string{
		"/v1":        "/v1/chat/completions",
		"/v1/":       "/v1/chat/completions",
		"":           "/chat/completions",
		"/openai/v1": "/openai/v1/chat/completions",
	} {
		srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text.json").Reply())
		p := newProvider(t, srv, func(c *openai.Config) { c.BaseURL = srv.URL + base })
		_, err := p.Generate(context.Background(), req)
		require.NoError(t, err, base)
		assert.Equal(t, path, srv.Requests()[0].Path, base)
	}
}

// TestCompatibleServersErrorEnvelopes: servers that speak the API but not its error envelope
// (a bare {"error": "..."}, vLLM's top-level message) still get their status classified and
// their message shown.
func TestCompatibleServersErrorEnvelopes(t *testing.T) {
	tests := []struct {
		name  string
		reply providertest.Reply
		want  providertest.WantError
	}{
		{
			name:  "bare error string",
			reply: providertest.Reply{Status: 404, Body: `{"error":"model \"llama9\" not found, try pulling it first"}`},
			want:  providertest.WantError{Kind: provider.Misconfigured, Status: 404, Contains: []string{`model "llama9" not found`, "check FORGE_MODEL"}},
		},
		{
			name:  "top-level message",
			reply: providertest.Reply{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`},
			want:  providertest.WantError{Kind: provider.Misconfigured, Status: 400, Contains: []string{"maximum context length is 8192 tokens"}},
		},
		{
			name:  "empty body",
			reply: providertest.Reply{Status: 503},
			want:  providertest.WantError{Kind: provider.Unavailable, Status: 503, Contains: []string{"Service Unavailable"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := providertest.New(t, tt.reply)
			p := newProvider(t, srv, nil)
			_, err := p.Generate(context.Background(), req)
			providertest.ExpectError(t, err, openai.Name, tt.want)
		})
	}
}

// TestRedirectToAnotherHostIsNotFollowed: the API key never follows a redirect off the
// configured server; the error says where the server pointed.
func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	other := providertest.New(t) // any request here fails the test
	srv := providertest.New(t, providertest.Reply{Status: http.StatusTemporaryRedirect,
		Header: map[string]string{"Location": other.URL + "/v1/chat/completions"}})
	p := newProvider(t, srv, nil)
	_, err := p.Generate(context.Background(), req)
	providertest.ExpectError(t, err, openai.Name, providertest.WantError{Kind: provider.Misconfigured, Status: http.StatusTemporaryRedirect,
		Contains: []string{"redirected to " + other.URL}})
	assert.Empty(t, other.Requests())
}

// TestCustomHeaders: OPENAI_CUSTOM_HEADERS (which openai-go read from the process) comes through
// the env func; it adds headers but cannot replace the credentials.
func TestCustomHeaders(t *testing.T) {
	srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text.json").Reply())
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.URL + "/v1", "FORGE_MODEL": "gpt-test",
		"OPENAI_CUSTOM_HEADERS": "Helicone-Auth: Bearer sk-helicone\nno colon here\nX-Team :  forge \nAuthorization: Bearer other"}
	cfg, err := openai.FromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	p, err := openai.New(cfg)
	require.NoError(t, err)
	_, err = p.Generate(context.Background(), req)
	require.NoError(t, err)
	h := srv.Requests()[0].Header
	assert.Equal(t, "Bearer sk-helicone", h.Get("Helicone-Auth"))
	assert.Equal(t, "forge", h.Get("X-Team"))
	assert.Equal(t, []string{"Bearer sk-test"}, h.Values("Authorization"))
}
