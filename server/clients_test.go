package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	forgemcp "github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef"
	carolToken = "carol-token-0123456789abcdef"
	daveToken  = "dave-token-0123456789abcdef"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// testClients: alice calls text and vault, bob only other (his file entry holds the token's
// hash), carol every role, dave text at 2 requests an hour.
func testClients(t testing.TB) *Clients {
	t.Helper()
	cs, err := ParseClients([]byte(fmt.Sprintf(`
- name: alice
  token: %s
  roles: [text, vault]
- {name: bob, token_sha256: %s, roles: [other]}
- name: carol
  token: %s
  roles: "*"
- name: dave
  token: %s
  roles: [text]
  rate: 2/h
`, aliceToken, sha(bobToken), carolToken, daveToken)))
	require.NoError(t, err)
	return cs
}

func do(t testing.TB, method, url, token, body string) (*http.Response, []byte) {
	t.Helper()
	if method == "POST" {
		return post(t, url, token, body)
	}
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return roundTrip(t, req)
}

// errBody checks an error response's JSON body (the Outcome's error shape) and returns its type.
func errBody(t testing.TB, body []byte) string {
	t.Helper()
	var e apiError
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	assert.False(t, e.OK)
	assert.NotEmpty(t, e.Error.Message)
	return e.Error.Type
}

// TestClientTokensRolesAndRate: with clients configured a call needs a client's token (401), a
// client reaches only the roles it names (403), over its rate it gets 429 with Retry-After, and
// probes and the operator verbs keep working as before.
func TestClientTokensRolesAndRate(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{Clients: testClients(t), AdminToken: "admin-token-0123456789"})
	call := ts.URL + "/v1/call/text/upper"

	resp, body := post(t, call, "", `{"s":"go"}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "unauthorized", errBody(t, body))
	assert.NotEmpty(t, resp.Header.Get("WWW-Authenticate"))
	resp, body = post(t, call, "nobody-0123456789abcdef", `{"s":"go"}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, string(body), "no client's")

	resp, body = post(t, call, bobToken, `{"s":"go"}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "bob may call only the role other")
	assert.Equal(t, "refused", errBody(t, body))
	assert.Contains(t, string(body), "may not call role text")

	resp, body = post(t, call, aliceToken, `{"s":"go"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"GO"`, string(o.Value))

	// Reads: a role of one's own, yes; listings over every role only with "*".
	resp, _ = do(t, "GET", ts.URL+"/v1/roles/text", aliceToken, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = do(t, "GET", ts.URL+"/v1/artifacts/text/upper", bobToken, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, body = do(t, "GET", ts.URL+"/v1/roles", aliceToken, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "refused", errBody(t, body))
	resp, _ = do(t, "GET", ts.URL+"/v1/roles", carolToken, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = do(t, "GET", ts.URL+"/v1/stats", "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = do(t, "GET", ts.URL+"/healthz", "", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "probes need no token")
	resp, _ = post(t, ts.URL+"/v1/admin/bless/text/upper", "admin-token-0123456789", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "operator verbs keep the admin token")

	// The rate: dave has 2 an hour.
	for i := range 2 {
		resp, body = post(t, call, daveToken, `{"s":"go"}`)
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i+1, body)
	}
	resp, body = post(t, call, daveToken, `{"s":"go"}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "rate_limited", errBody(t, body))
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", resp.Header.Get("Retry-After"))
	assert.InDelta(t, 1800, secs, 5, "one request every 30 minutes")
	resp, _ = post(t, call, aliceToken, `{"s":"go"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "one client's rate is not another's")
}

func TestParseClientsRefusals(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{`[]`, "no clients"},
		{`[{name: a, roles: "*"}]`, "no token"},
		{`[{name: a, token: short, roles: "*"}]`, "at least 16"},
		{`[{name: a, token_sha256: abc, roles: "*"}]`, "token_sha256"},
		{`[{name: a, token: 0123456789abcdef0, roles: []}]`, "roles"},
		{`[{name: a, token: 0123456789abcdef0, roles: all}]`, `"*"`},
		{`[{name: a, token: 0123456789abcdef0, roles: "*"}, {name: a, token: 0123456789abcdef1, roles: "*"}]`, "twice"},
		{`[{name: a, token: 0123456789abcdef0, roles: "*"}, {name: b, token: 0123456789abcdef0, roles: "*"}]`, "same token"},
		{`[{name: a, token: 0123456789abcdef0, roles: "*", rate: 10/day}]`, "period"},
		{`[{name: "a b", token: 0123456789abcdef0, roles: "*"}]`, "name"},
		{`[{name: a, token: 0123456789abcdef0, roles: "*", rol: x}]`, "rol"},
		// The admin token calls as "admin": a client of that name would share the operator's
		// live programs and lessons' name, and change the roles the operator defined over HTTP.
		{`[{name: admin, token: 0123456789abcdef0, roles: [text], define_roles: true}]`, `"admin" is the operator's`},
	} {
		_, err := ParseClients([]byte(tc.conf))
		if assert.Error(t, err, tc.conf) {
			assert.Contains(t, err.Error(), tc.want, tc.conf)
		}
	}
	// JSON is YAML.
	cs, err := ParseClients([]byte(`[{"name":"a","token":"0123456789abcdef0","roles":["x"],"rate":"100/s"}]`))
	require.NoError(t, err)
	c := cs.Lookup("0123456789abcdef0")
	require.NotNil(t, c)
	assert.True(t, c.MayCall("x"))
	assert.False(t, c.MayCall("y"))
}

func TestLimiterRefills(t *testing.T) {
	l := &limiter{burst: 2, perSec: 1, tokens: 2}
	t0 := time.Unix(1000, 0)
	ok, _ := l.take(t0)
	assert.True(t, ok)
	ok, _ = l.take(t0)
	assert.True(t, ok)
	ok, retry := l.take(t0)
	assert.False(t, ok)
	assert.Equal(t, time.Second, retry)
	ok, _ = l.take(t0.Add(1500 * time.Millisecond))
	assert.True(t, ok, "refilled")
	ok, _ = l.take(t0.Add(time.Hour))
	assert.True(t, ok)
	ok, _ = l.take(t0.Add(time.Hour))
	assert.True(t, ok)
	ok, _ = l.take(t0.Add(time.Hour))
	assert.False(t, ok, "the bucket holds at most burst")
}

const keepLast = "package artifact\n\nvar last string\n\nfunc Keep(s string) string {\n\tprev := last\n\tlast = s\n\treturn prev\n}\n"

// vaultForge serves vault.keep, which hands each call the argument of the call before.
func vaultForge(t testing.TB) *forge.Forge {
	t.Helper()
	line, _ := json.Marshal(map[string]any{"role": "vault", "method": "keep", "kind": "generate", "attempt": 1, "code": keepLast})
	p, err := replay.New("test", line)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "vault", Purpose: "remembers the last string it was given",
		Methods: map[string]string{"keep": "func Keep(s string) string"}}))
	return f
}

func keepOverHTTP(t testing.TB, base, token, s string) string {
	t.Helper()
	resp, body := post(t, base+"/v1/call/vault/keep", token, fmt.Sprintf(`{"s":%q}`, s))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	require.True(t, o.OK, "%+v", o.Err)
	var v string
	require.NoError(t, json.Unmarshal(o.Value, &v))
	return v
}

// bearerTransport adds a client's token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t testing.TB, url, token string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpKeep(t testing.TB, cs *sdk.ClientSession, role, s string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_call",
		Arguments: map[string]any{"role": role, "method": "keep", "args": map[string]string{"s": s}}})
	require.NoError(t, err)
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError {
		return text, false
	}
	var v string
	require.NoError(t, json.Unmarshal([]byte(text), &v), text)
	return v, true
}

// TestClientsDoNotShareStateOverHTTPAndMCP: the client's name reaches the forge from HTTP calls
// and from MCP tool calls, so one client's stored argument never reaches another, and an MCP
// tool call is held to the client's roles as well.
func TestClientsDoNotShareStateOverHTTPAndMCP(t *testing.T) {
	f := vaultForge(t)
	cs := testClients(t)
	ms, err := forgemcp.New(f, forgemcp.Options{})
	require.NoError(t, err)
	defer ms.Close()
	_, ts := newTestServer(t, f, Options{Clients: cs, Extra: map[string]http.Handler{"/mcp": cs.MCP(ms.HTTPHandler())}, OnShutdown: ms.CloseSessions})

	assert.Equal(t, "", keepOverHTTP(t, ts.URL, aliceToken, "alice-secret"))
	assert.Equal(t, "", keepOverHTTP(t, ts.URL, carolToken, "carol-1"), "carol got alice's argument")
	assert.Equal(t, "alice-secret", keepOverHTTP(t, ts.URL, aliceToken, "alice-2"), "alice's own state")

	alice := mcpSession(t, ts.URL+"/mcp", aliceToken)
	carol := mcpSession(t, ts.URL+"/mcp", carolToken)
	v, ok := mcpKeep(t, alice, "vault", "alice-mcp")
	require.True(t, ok, v)
	assert.Equal(t, "alice-2", v, "an MCP tool call runs as the token's client")
	v, ok = mcpKeep(t, carol, "vault", "carol-mcp")
	require.True(t, ok, v)
	assert.Equal(t, "carol-1", v)

	bob := mcpSession(t, ts.URL+"/mcp", bobToken)
	v, ok = mcpKeep(t, bob, "vault", "bob")
	assert.False(t, ok)
	assert.Contains(t, v, "may not call role vault")
	res, err := bob.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_roles", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "a listing over every role needs \"*\"")

	// Without a token the MCP endpoint is closed like every other.
	resp, _ := post(t, ts.URL+"/mcp", "", `{}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestClientRoleOfEscapedPath: the role the gate checks is the one the mux serves, escaped
// slashes included.
func TestClientRoleOfEscapedPath(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/call/text/upper":         "text",
		"/v1/call/te%78t/upper":       "text",
		"/v1/call/text%2Fother/upper": "text/other",
		"/v1/history/vault/keep":      "vault",
		"/v1/artifacts/vault/keep":    "vault",
		"/v1/roles/vault":             "vault",
	} {
		got, listing := roleOf(path)
		assert.Equal(t, want, got, path)
		assert.False(t, listing, path)
	}
	for _, path := range []string{"/v1/roles", "/v1/artifacts", "/v1/stale", "/v1/stats", "/v1/call/"} {
		_, listing := roleOf(path)
		assert.True(t, listing, path)
	}
}
