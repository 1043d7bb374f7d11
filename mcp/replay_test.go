package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

// forge_regen refuses new code that changes answers real calls got, and takes accept_changes.
func TestRegenToolAcceptChanges(t *testing.T) {
	changes := "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"abc\" {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n"
	var b strings.Builder
	for i, code := range []string{upperOK, changes, changes} {
		j, _ := json.Marshal(map[string]any{"role": "text", "method": "upper", "kind": "generate", "attempt": i + 1, "code": code})
		b.Write(append(j, '\n'))
	}
	p, err := replay.New("test", []byte(b.String()))
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi", MaxProviderCalls: 1})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "text", Purpose: "string utilities", Methods: map[string]string{"upper": "func Upper(s string) string"}}))
	for _, s := range []string{"first", "abc"} {
		require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"`+s+`"}`)).OK)
	}
	f.FlushSample()
	require.NoError(t, f.Bless("text", "upper", false))

	cs := inMemorySession(t, f, Options{OperatorVerbs: true})
	regen := func(args map[string]any) (string, bool) {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_regen", Arguments: args})
		require.NoError(t, err)
		out, _ := json.Marshal(res)
		return string(out), !res.IsError
	}
	out, ok := regen(map[string]any{"role": "text", "method": "upper"})
	assert.False(t, ok, out)
	assert.Contains(t, out, `was \"ABC\", now \"abc\"`)
	out, ok = regen(map[string]any{"role": "text", "method": "upper", "accept_changes": true})
	assert.True(t, ok, out)
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, 2, art.Generation)

	// forge_diff and forge_replay: the same forge functions as `forge diff` and `forge replay`.
	tool := func(name string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		out, _ := json.Marshal(res)
		return string(out), !res.IsError
	}
	out, ok = tool("forge_diff", map[string]any{"role": "text", "method": "upper"})
	require.True(t, ok, out)
	assert.Contains(t, out, `--- gen-1\n+++ gen-2`)
	assert.Contains(t, out, `\"kind\":\"changed\",\"args\":{\"s\":\"abc\"},\"was\":\"ABC\",\"now\":\"abc\"`)
	out, ok = tool("forge_replay", map[string]any{"role": "text", "method": "upper", "gen": 1})
	require.True(t, ok, out)
	assert.Contains(t, out, `\"changed\":1`)
	out, ok = tool("forge_diff", map[string]any{"role": "text", "method": "upper", "from": 9})
	assert.False(t, ok)
	assert.Contains(t, out, "keeps no generation 9")

	// forge_rollback replays the sample on the kept code: refused on a blessed artifact whose
	// answers it changes, unless accept_changes.
	require.NoError(t, f.Bless("text", "upper", false))
	out, ok = tool("forge_rollback", map[string]any{"role": "text", "method": "upper"})
	assert.False(t, ok, out)
	assert.Contains(t, out, `was \"abc\", now \"ABC\"`)
	out, ok = tool("forge_rollback", map[string]any{"role": "text", "method": "upper", "accept_changes": true})
	assert.True(t, ok, out)
	assert.Contains(t, out, `\"generation\":3`)

	// Not offered without the operator verbs: they run code and show other callers' inputs.
	plain := inMemorySession(t, f, Options{})
	tools, err := plain.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tl := range tools.Tools {
		assert.NotContains(t, []string{"forge_replay", "forge_diff"}, tl.Name)
	}
}

// inMemorySession serves f over MCP in memory and returns a client's session; the test's cleanup
// closes them.
func inMemorySession(t *testing.T, f *forge.Forge, o Options) *sdk.ClientSession {
	t.Helper()
	s, err := New(f, o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}
