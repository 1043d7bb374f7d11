package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// TestRedteam6AClientOfSomeRolesSeesOnlyTheirTools: over streamable HTTP with client identities,
// tools/list listed every role's method tools to a client of some roles, and a tools/call of
// vault__nope answered "role vault declares no method nope; its tools are vault__open" (the
// forge_roles listing and the role resources are refused to such a client). Now it is listed
// its roles' tools, and learns of no other role, not even whether it exists.
func TestRedteam6AClientOfSomeRolesSeesOnlyTheirTools(t *testing.T) {
	s := warmServer(t)
	require.NoError(t, s.f.AddRole(registry.Contract{Role: "vault", Purpose: "secrets", Methods: map[string]string{"open": "func Open(k string) string"}}))
	require.NoError(t, s.Sync())
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		scopes := map[string][]string{"alice": {RoleScope("text")}, "root": {RoleScope("*")}}[token]
		if scopes == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: token, Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(s.HTTPHandler()))
	t.Cleanup(ts.Close)
	rpc := func(who, body string) string {
		h := []string{"Authorization", "Bearer " + who}
		sid := rawSession(t, ts.URL, h...)
		resp, out := rawPost(t, ts.URL, body, append(h, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...)
		require.Equal(t, http.StatusOK, resp.StatusCode, out)
		return out
	}
	names := func(who string) []string {
		out := rpc(who, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var r struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(sseData(out)), &r), out)
		var ns []string
		for _, t := range r.Result.Tools {
			ns = append(ns, t.Name)
		}
		return ns
	}
	assert.Contains(t, names("root"), ToolName("vault", "open"))
	alice := names("alice")
	assert.Contains(t, alice, ToolName("text", "upper"))
	assert.Contains(t, alice, "forge_call")
	assert.NotContains(t, alice, ToolName("vault", "open"), "another role's tool")

	for _, name := range []string{"vault__nope", "nothere__x"} {
		out := rpc("alice", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
		assert.NotContains(t, out, "vault__open", name)
		assert.NotContains(t, out, "there is no role", "%s: whether a role exists is not said", name)
		assert.Contains(t, out, "tools/list lists every tool", name)
	}
	out := rpc("root", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vault__nope","arguments":{}}}`)
	assert.Contains(t, out, "its tools are vault__open", "a client of every role is told")
}

// sseData is the JSON of a response body, an event stream's data line or the body itself.
func sseData(body string) string {
	for line := range strings.Lines(body) {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(d)
		}
	}
	return body
}
