package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// TestKnowledgeTools: forge_record, forge_recall and forge_confirm over an MCP session (issue 24
// item 5); over stdio or in memory the session is one client of every role.
func TestKnowledgeTools(t *testing.T) {
	f := openForge(t, t.TempDir())
	s, err := New(f, Options{})
	require.NoError(t, err)
	defer s.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools := listTools(t, cs)
	for _, n := range []string{"forge_recall", "forge_record", "forge_confirm"} {
		require.Contains(t, tools, n)
	}
	call := func(name string, args map[string]any) (map[string]any, bool) {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		var v map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		require.NoError(t, json.Unmarshal(b, &v))
		return v, !res.IsError
	}
	v, ok := call("forge_record", map[string]any{"content": "upper keeps non-letters", "reasoning": "seen", "domain": "text", "category": "fact"})
	require.True(t, ok, "%v", v)
	assert.Equal(t, true, v["created"])
	_, ok = call("forge_record", map[string]any{"content": "x", "domain": "Not A Role!"})
	assert.False(t, ok)
	v, ok = call("forge_recall", map[string]any{"query": "upper non-letters", "domain": "text"})
	require.True(t, ok, "%v", v)
	ls := v["lessons"].([]any)
	require.Len(t, ls, 1)
	l := ls[0].(map[string]any)
	assert.Equal(t, "upper keeps non-letters", l["content"])
	assert.Equal(t, "agent", l["provenance"].(map[string]any)["source"])
	assert.InDelta(t, 0.1, l["confidence"], 1e-9, "a recall confirms nothing")
	v, ok = call("forge_confirm", map[string]any{"domain": "text", "content": "UPPER keeps non-letters"})
	require.False(t, ok, "the session recorded it: its own confirmation does not count")
	assert.Contains(t, v["error"].(map[string]any)["message"], "counts each client once")
	_, _, err = f.Record(forge.WithClient(context.Background(), "teammate"), forge.RecordRequest{Content: "upper keeps digits", Domain: "text"})
	require.NoError(t, err)
	v, ok = call("forge_confirm", map[string]any{"domain": "text", "content": "UPPER keeps digits"})
	require.True(t, ok, "%v", v)
	assert.InDelta(t, 0.2, v["lesson"].(map[string]any)["confidence"], 1e-9)
	_, ok = call("forge_confirm", map[string]any{"domain": "text", "content": "never recorded"})
	assert.False(t, ok)
}
