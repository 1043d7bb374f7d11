package anthropic_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/anthropic"
	"github.com/artifactforge/forge/provider/providertest"
)

// The tests in this file compare the provider with recorded wire formats in testdata: the
// bodies anthropic-sdk-go sent for forge before forge dropped it, a real exchange with the API
// recorded by that SDK's own test suite, and responses and error envelopes in the shape the
// API documents (each file says where it comes from).

// recordedExchange is testdata/recorded_exchange.json.
type recordedExchange struct {
	Source  string `json:"source"`
	Request struct {
		Method, URL string
		Header      map[string]string
		Body        json.RawMessage
	} `json:"request"`
	Response providertest.Fixture `json:"response"`
}

func loadExchange(t *testing.T) recordedExchange {
	t.Helper()
	data, err := os.ReadFile("testdata/recorded_exchange.json")
	require.NoError(t, err)
	var x recordedExchange
	require.NoError(t, json.Unmarshal(data, &x))
	x.Response.Source = x.Source
	return x
}

// TestRequestMatchesRecordings: the body is what anthropic-sdk-go sent (system as one cacheable
// block, the user turn as a text block, the forced submit_code tool); the headers are those of
// the real request the SDK's test suite recorded: x-api-key, anthropic-version 2023-06-01,
// JSON content type, and no Authorization header beside the key.
func TestRequestMatchesRecordings(t *testing.T) {
	x := loadExchange(t)
	for fixture, codeTool := range map[string]bool{"sdk_request.json": false, "sdk_request_tool.json": true} {
		t.Run(fixture, func(t *testing.T) {
			want := providertest.LoadFixture(t, "testdata/"+fixture)
			srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text_cached.json").Reply())
			env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": srv.URL, "FORGE_MODEL": "claude-test"}
			if codeTool {
				env["FORGE_CODE_TOOL"] = "on"
			}
			cfg, err := anthropic.FromEnv(func(k string) string { return env[k] })
			require.NoError(t, err)
			p, err := anthropic.New(cfg)
			require.NoError(t, err)
			_, err = p.Generate(context.Background(), req)
			require.NoError(t, err)

			got := srv.Requests()[0]
			assert.Equal(t, want.Method, got.Method)
			assert.Equal(t, want.Path, got.Path)
			assert.Equal(t, want.JSON(t), got.JSON(t), "the body anthropic-sdk-go sent")
			for _, h := range []string{"Anthropic-Version", "Content-Type", "Accept"} {
				assert.Equal(t, x.Request.Header[h], got.Header.Get(h), h)
			}
			assert.Contains(t, x.Request.Header, "X-Api-Key")
			assert.Equal(t, "sk-ant-test", got.Header.Get("X-Api-Key"))
			assert.Empty(t, got.Header.Values("Authorization"))
		})
	}
}

// TestRecordedExchange: the real API response (text plus a tool_use of another tool, usage
// with cache fields, rate-limit headers) is read: its usage and model are kept and both
// blocks end up in Raw, though there is no Go code in it.
func TestRecordedExchange(t *testing.T) {
	x := loadExchange(t)
	srv := providertest.New(t, x.Response.Reply())
	p := newProvider(t, srv, nil)
	a, err := p.Generate(context.Background(), req)
	providertest.ExpectError(t, err, anthropic.Name, providertest.WantError{Kind: provider.BadAnswer, Is: provider.ErrNoCode})
	assert.Equal(t, "claude-3-7-sonnet-20250219", a.Model)
	assert.Equal(t, provider.Usage{InputTokens: 400, OutputTokens: 87}, a.Usage)
	assert.Contains(t, a.Raw, "I'll check the weather in San Francisco")
	assert.Contains(t, a.Raw, `{"city":"San Francisco","units":"celsius"}`)
}

// TestRecordedResponses: answers, usage with cache reads and writes (InputTokens counts every
// prompt token, CachedTokens the part read from the cache), and the API's error envelopes.
func TestRecordedResponses(t *testing.T) {
	tests := []struct {
		fixture  string
		codeTool bool
		usage    provider.Usage
		err      *providertest.WantError
	}{
		{fixture: "response_text_cached.json", usage: provider.Usage{InputTokens: 1540, OutputTokens: 90, CachedTokens: 1500}},
		{fixture: "response_tool_use_cache_write.json", codeTool: true, usage: provider.Usage{InputTokens: 1535, OutputTokens: 70}},
		{fixture: "error_429.json", err: &providertest.WantError{Kind: provider.RateLimited, Status: 429, RetryAfter: 7 * time.Second,
			Contains: []string{"rate_limited (HTTP 429, retry after 7s)", "rate_limit_error This request would exceed the rate limit"}}},
		{fixture: "error_529.json", err: &providertest.WantError{Kind: provider.Unavailable, Status: 529,
			Contains: []string{"overloaded_error Overloaded"}}},
		{fixture: "error_401.json", err: &providertest.WantError{Kind: provider.Auth, Status: 401,
			Contains: []string{"authentication_error invalid x-api-key", "ANTHROPIC_API_KEY"}}},
		{fixture: "error_400.json", err: &providertest.WantError{Kind: provider.Misconfigured, Status: 400,
			Contains: []string{"invalid_request_error prompt is too long"}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := providertest.New(t, providertest.LoadFixture(t, "testdata/"+tt.fixture).Reply())
			p := newProvider(t, srv, func(c *anthropic.Config) { c.CodeTool = tt.codeTool })
			a, err := p.Generate(context.Background(), req)
			if tt.err != nil {
				providertest.ExpectError(t, err, anthropic.Name, *tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, code, a.Code)
			assert.Equal(t, "claude-sonnet-5-5-20261001", a.Model)
			assert.Equal(t, tt.usage, a.Usage)
		})
	}
}

// TestBaseURLJoin: the endpoint is v1/messages under ANTHROPIC_BASE_URL, exactly where
// anthropic-sdk-go put it (a base ending in /v1 gets /v1/v1/messages, as before).
func TestBaseURLJoin(t *testing.T) {
	for base, path := range map[string]string{
		"":           "/v1/messages",
		"/":          "/v1/messages",
		"/v1":        "/v1/v1/messages",
		"/anthropic": "/anthropic/v1/messages",
		"/proxy/":    "/proxy/v1/messages",
	} {
		srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text_cached.json").Reply())
		p := newProvider(t, srv, func(c *anthropic.Config) { c.BaseURL = srv.URL + base })
		_, err := p.Generate(context.Background(), req)
		require.NoError(t, err, base)
		assert.Equal(t, path, srv.Requests()[0].Path, base)
	}
}

// TestAPIKeyWinsOverAuthToken: with both set, only the key is sent, as x-api-key.
func TestAPIKeyWinsOverAuthToken(t *testing.T) {
	srv := providertest.New(t, providertest.LoadFixture(t, "testdata/response_text_cached.json").Reply())
	p := newProvider(t, srv, func(c *anthropic.Config) { c.APIKey, c.AuthToken = "sk-ant-key", "tok-123" })
	_, err := p.Generate(context.Background(), req)
	require.NoError(t, err)
	r := srv.Requests()[0]
	assert.Equal(t, "sk-ant-key", r.Header.Get("X-Api-Key"))
	assert.Empty(t, r.Header.Values("Authorization"))
}

// TestRedirectDoesNotCarryTheKey: x-api-key is not a header Go's client drops on a redirect to
// another host, so the provider does not follow one; the error says where the server pointed.
func TestRedirectDoesNotCarryTheKey(t *testing.T) {
	other := providertest.New(t) // any request here fails the test
	srv := providertest.New(t, providertest.Reply{Status: http.StatusPermanentRedirect,
		Header: map[string]string{"Location": other.URL + "/v1/messages"}})
	p := newProvider(t, srv, nil)
	_, err := p.Generate(context.Background(), req)
	providertest.ExpectError(t, err, anthropic.Name, providertest.WantError{Kind: provider.Misconfigured, Status: http.StatusPermanentRedirect,
		Contains: []string{"redirected to " + other.URL}})
	assert.Empty(t, other.Requests())
}

// TestCutOffBodyIsUnavailable: a response whose body breaks off is a transport failure, retried
// like one, not a bad answer fed back to the model.
func TestCutOffBodyIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		_, _ = w.Write([]byte(`{"id": "msg_1", "type": "message", "content": [{"type": "text", "te`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	p, err := anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: "http://" + ln.Addr().String(), Timeout: 5 * time.Second})
	require.NoError(t, err)
	_, err = p.Generate(context.Background(), req)
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, provider.Unavailable, pe.Kind, err.Error())
	assert.Contains(t, err.Error(), "the response was cut off")
}
