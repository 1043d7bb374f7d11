package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Operator tools write their event lines (issue 22, item 9) with the client the context names,
// else the forge's client name ("library" here), and forge_lift is the way back from a mistaken
// quarantine (issue 23, item 5).
func TestOperatorToolsAreLoggedAndLiftIsOne(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store)
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	s, err := New(f, Options{OperatorVerbs: true})
	require.NoError(t, err)
	defer s.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent-7"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, tool := range []string{"forge_quarantine", "forge_lift"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"role": "text", "method": "upper"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %+v", tool, res.Content)
	}
	a, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Candidate, a.Lifecycle)
	f.Flush()
	evs, err := forge.ReadEvents(store)
	require.NoError(t, err)
	var who []string
	for i := range evs {
		if forge.IsOperatorAction(&evs[i]) {
			who = append(who, evs[i].Action+" by "+evs[i].Who)
		}
	}
	assert.Equal(t, []string{"quarantine by library", "lift by library"}, who)
}
