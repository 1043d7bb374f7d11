package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// stalling never answers before its context ends: a model that hangs.
type stalling struct{}

func (stalling) Name() string { return "stalling" }

func (stalling) Generate(ctx context.Context, _ provider.Request) (provider.Answer, error) {
	<-ctx.Done()
	return provider.Answer{}, ctx.Err()
}

// Options.CallTimeout bounds a tool call as --call-timeout bounds /v1/call: a method whose
// generation hangs answers the agent with an error at the bound, over both transports (the
// HTTP one through the fast path), instead of keeping the request open.
func TestCallTimeoutBoundsToolCalls(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *Server, *sdk.Client) *sdk.ClientSession{"in-memory": connectInMemory, "http": connectHTTP} {
		t.Run(name, func(t *testing.T) {
			f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: stalling{}, DefaultSandbox: "yaegi"})
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			require.NoError(t, f.AddRole(registry.Contract{Role: "slow", Purpose: "a method the model never writes",
				Methods: map[string]string{"m": "func M(x int) int"}}))
			s, err := New(f, Options{CallTimeout: 200 * time.Millisecond})
			require.NoError(t, err)
			defer s.Close()
			cs := connect(t, s, sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil))
			t.Cleanup(func() { cs.Close() }) // before the test server's Close, which waits for its streams
			ctx, cancel := context.WithTimeout(context.Background(), hang)
			defer cancel()
			for _, tool := range []string{"forge_call", ToolName("slow", "m")} {
				args := map[string]any{"x": 1}
				if tool == "forge_call" {
					args = map[string]any{"role": "slow", "method": "m", "args": map[string]any{"x": 1}}
				}
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
				require.NoError(t, err, "%s: the bound ends the call, not the client's wait", tool)
				assert.True(t, res.IsError, tool)
				o := outcomeOf(t, res)
				require.NotNil(t, o.Err, tool)
				assert.Contains(t, o.Err.Message, "call again", tool)
			}
		})
	}
}
