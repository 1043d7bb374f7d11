package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

const tempCode = "package artifact\n\nfunc CToF(c int, b int8) int { return c*9/5 + 32 + int(b) }\n"

// Issue 23 item 3 over MCP: a null (what an inspector sends for "abc" typed into an integer
// field) for a parameter whose published schema has no null is a caller error naming it, from
// forge_call (before any code is generated) and from the method's own tool; the published schema
// carries the integer ranges the decoder enforces.
func TestMCPNullArgIsACallerError(t *testing.T) {
	line, _ := json.Marshal(map[string]any{"role": "units", "method": "c_to_f", "kind": "generate", "attempt": 1, "code": tempCode})
	p, err := replay.New("test", append(line, '\n'))
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "units", Purpose: "conversions", Methods: map[string]string{"c_to_f": "func CToF(c int, b int8) int"}}))

	s, err := New(f, Options{})
	require.NoError(t, err)
	defer s.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "units", "method": "c_to_f", "args": map[string]any{"c": nil, "b": 0}}})
	require.NoError(t, err)
	require.True(t, res.IsError, "a null c must not answer: %v", res.Content)
	o := outcomeOf(t, res)
	assert.Equal(t, "caller", o.Err.Class)
	assert.Contains(t, o.Err.Message, "param c")
	assert.Zero(t, o.Meta.ProviderCalls, "refused before any code was written")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "units", "method": "c_to_f", "args": map[string]any{"c": 100, "b": 0}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	require.NoError(t, f.Bless("units", "c_to_f", false))
	require.NoError(t, s.Sync())

	tool := listTools(t, cs)["units__c_to_f"]
	require.NotNil(t, tool)
	schema, _ := json.Marshal(tool.InputSchema)
	assert.Contains(t, string(schema), `"maximum":127`)
	for _, args := range []map[string]any{{"c": nil, "b": 0}, {"c": 1, "b": nil}} {
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "units__c_to_f", Arguments: args})
		require.NoError(t, err)
		require.True(t, res.IsError, "%v: %v", args, res.Content)
		o = outcomeOf(t, res)
		assert.Equal(t, "caller", o.Err.Class, "%v", args)
		assert.Equal(t, "args", o.Err.Type, "%v", args)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "units__c_to_f", Arguments: map[string]any{"c": 100, "b": 0}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.JSONEq(t, `212`, string(outcomeOf(t, res).Value))
}
