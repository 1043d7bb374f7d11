package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// TestResources: a role's contract and a method's current code are resources; a subscriber to
// the code is notified when a call generates it and when it is regenerated, and reads the new
// generation.
func TestResources(t *testing.T) {
	f, _ := agentForge(t)
	require.NoError(t, f.Watch())
	s, err := New(f, Options{DefineRoles: forge.DefineSwitches{Allow: true}})
	require.NoError(t, err)
	defer s.Close()
	updated := make(chan string, 16)
	cs := connectInMemory(t, s, sdk.NewClient(&sdk.Implementation{Name: "agent"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI }}))
	defer cs.Close()
	ctx := context.Background()

	_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "forge://roles/words"})
	require.Error(t, err, "no such role yet")
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_define_role", Arguments: wordsContract})
	require.NoError(t, err)
	require.False(t, res.IsError)
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "forge://roles/words"})
	require.NoError(t, err)
	assert.Contains(t, rr.Contents[0].Text, `"purpose": "count things in text"`)

	const code = "forge://code/words/word_count"
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: code}))
	wait := func(what string) {
		t.Helper()
		deadline := time.After(hang)
		for {
			select {
			case u := <-updated:
				if u == code {
					return
				}
			case <-deadline:
				t.Fatalf("no resources/updated for %s after %s (a hang)", code, what)
			}
		}
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "words__word_count", Arguments: map[string]any{"s": "a b"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	wait("the generating call")
	rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: code})
	require.NoError(t, err)
	assert.Contains(t, rr.Contents[0].Text, "func WordCount")
	require.True(t, f.Regenerate(ctx, "words", "word_count").OK)
	wait("the regeneration")
	deadline := time.Now().Add(hang)
	for {
		require.True(t, time.Now().Before(deadline), "the regeneration never reached the resource (a hang)")
		rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: code})
		require.NoError(t, err)
		if rr.Contents[0].Meta[MetaGeneration] == float64(2) {
			break
		}
		time.Sleep(10 * time.Millisecond) // the notification may precede this process's cache
	}
	assert.Contains(t, rr.Contents[0].Text, "// v2")
}
