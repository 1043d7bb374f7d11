package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

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

// Issue 23 item 10 over MCP: a tool call that sent a progress token gets a progress notification
// for each step of the generation it leads (what forge waits for, how it ended); one without a
// token gets none.
func TestMCPProgressNotificationsWhileGenerating(t *testing.T) {
	f := openForge(t, t.TempDir())
	s, err := New(f, Options{})
	require.NoError(t, err)
	defer s.Close()
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, req.Params)
		}})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := client.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	params := &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": "hi"}}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	// Notifications may arrive after the result: wait for the last step (a hang bound).
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(got)
		last := ""
		if n > 0 {
			last = got[n-1].Message
		}
		mu.Unlock()
		if strings.Contains(last, "is verified and current") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(got), 3, "asking, answered, persisted")
	assert.Contains(t, got[0].Message, "waiting for the model")
	assert.Contains(t, got[len(got)-1].Message, "text.upper generation 1 is verified and current")
	for i, p := range got {
		assert.Equal(t, "tok-1", p.ProgressToken)
		assert.Equal(t, float64(i+1), p.Progress, "progress increases with every step")
	}

	got = nil
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "lower", "args": map[string]any{"s": "HI"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	assert.Empty(t, got, "no token, no notifications")
}

// Issue 23 item 1 over MCP: forge_call of a zero-argument method with no args answers on the call
// that generates it.
func TestMCPZeroArgFirstCallAnswers(t *testing.T) {
	line, _ := json.Marshal(map[string]any{"role": "ver", "method": "get", "kind": "generate", "attempt": 1,
		"code": "package artifact\n\nfunc Get() string { return \"v1\" }\n"})
	p, err := replay.New("test", append(line, '\n'))
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "ver", Purpose: "the version", Methods: map[string]string{"get": "func Get() string"}}))
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
	for _, src := range []string{forge.SourceGenerated, forge.SourcePersisted} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "ver", "method": "get"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		o := outcomeOf(t, res)
		assert.Equal(t, src, o.Meta.ProgramSource)
		assert.JSONEq(t, `"v1"`, string(o.Value))
	}
}
