package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// anyMethod writes `func Name(x int) int { return x }` for any method.
type anyMethod struct{}

func (anyMethod) Name() string { return "any-method" }

func (anyMethod) Generate(_ context.Context, r provider.Request) (provider.Answer, error) {
	return provider.Answer{Code: fmt.Sprintf("package artifact\n\nfunc %s(x int) int { return x }\n", sandbox.ExportedName(r.Method))}, nil
}

// A client that spent its model calls (model_calls in the clients file) gets 429 with
// Retry-After for a method with no code yet, while code that exists answers it and another
// client keeps the server's bound.
func TestModelCallsPerClientOverHTTP(t *testing.T) {
	const erinToken, frankToken = "erin-token-0123456789", "frank-token-0123456789"
	cs, err := ParseClients([]byte(fmt.Sprintf(`
- {name: erin, token: %s, roles: "*", model_calls: 1/h}
- {name: frank, token: %s, roles: "*"}
`, erinToken, frankToken)))
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: anyMethod{}, DefaultSandbox: "yaegi",
		ModelCalls: cs.ModelCalls(forge.ModelCallBound{N: 100})})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "open", Purpose: "any method the caller names"}))
	_, ts := newTestServer(t, f, Options{Clients: cs})

	resp, body := post(t, ts.URL+"/v1/call/open/a", erinToken, `{"x":1}`)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	resp, body = post(t, ts.URL+"/v1/call/open/b", erinToken, `{"x":1}`)
	require.Equal(t, 429, resp.StatusCode, "%s", body)
	assert.Equal(t, "3600", resp.Header.Get("Retry-After"))
	assert.Equal(t, forge.TypeModelCalls, errBody(t, body))
	var o struct {
		Error struct {
			RetryAfter int64  `json:"retry_after"`
			Message    string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &o))
	assert.Positive(t, o.Error.RetryAfter)
	assert.Contains(t, o.Error.Message, "client erin spent its 1 model calls")

	resp, body = post(t, ts.URL+"/v1/call/open/a", erinToken, `{"x":2}`)
	assert.Equal(t, 200, resp.StatusCode, "code that exists still answers: %s", body)
	resp, body = post(t, ts.URL+"/v1/call/open/b", frankToken, `{"x":1}`)
	assert.Equal(t, 200, resp.StatusCode, "another client has the server's bound: %s", body)
}

func TestParseModelCalls(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want forge.ModelCallBound
		err  string
	}{
		{"100/h", forge.ModelCallBound{N: 100, Per: 3600e9}, ""},
		{"5/m", forge.ModelCallBound{N: 5, Per: 60e9}, ""},
		{"off", forge.ModelCallBound{}, ""},
		{"0", forge.ModelCallBound{}, ""},
		{"100", forge.ModelCallBound{}, "off for no bound"},
		{"-3/h", forge.ModelCallBound{}, "N > 0"},
	} {
		got, err := ParseModelCalls(tc.in)
		if tc.err != "" {
			if assert.Error(t, err, tc.in) {
				assert.Contains(t, err.Error(), tc.err)
			}
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := ParseClients([]byte(`[{name: a, token: 0123456789abcdef0, roles: "*", model_calls: lots}]`))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "model_calls")
	}
}
