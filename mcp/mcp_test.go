package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

const (
	upperOK = "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"
	lowerOK = "package artifact\n\nimport \"strings\"\n\nfunc Lower(s string) string { return strings.ToLower(s) }\n"
	hang    = 10 * time.Second // only detects a hang
)

// countingCassette answers text.upper and text.lower once each.
func openForge(t testing.TB, store string) *forge.Forge {
	t.Helper()
	var b strings.Builder
	for _, l := range []map[string]any{
		{"role": "text", "method": "upper", "kind": "generate", "attempt": 1, "code": upperOK},
		{"role": "text", "method": "lower", "kind": "generate", "attempt": 1, "code": lowerOK},
	} {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	p, err := replay.New("test", []byte(b.String()))
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: store, Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, f.AddRole(registry.Contract{Role: "text", Purpose: "string utilities",
		Methods: map[string]string{"upper": "func Upper(s string) string", "lower": "func Lower(s string) string"}}))
	return f
}

// scenario is the "done when" for one transport: list tools, call a persisted method with
// no provider call, forge_call a new method that gets generated, and see list_changed after a bless
// in another process.
func scenario(t *testing.T, connect func(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession) {
	store := t.TempDir()
	f := openForge(t, store)
	f.Store().SetRevalidate(time.Hour) // only watch mode brings the other process's bless
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Bless("text", "upper", false))
	require.NoError(t, f.Watch())
	s, err := New(f, Options{})
	require.NoError(t, err)
	defer s.Close()

	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	cs := connect(t, s, client)
	defer cs.Close()
	ctx := context.Background()

	tools := listTools(t, cs)
	require.Contains(t, tools, "text__upper")
	require.Contains(t, tools, "forge_call")
	require.Contains(t, tools, "forge_roles")
	require.Contains(t, tools, "text__lower", "every declared method is a tool, before its code exists")
	assert.Equal(t, "none", tools["text__lower"].Meta[MetaLifecycle])
	assert.Equal(t, "blessed", tools["text__upper"].Meta[MetaLifecycle], "the lifecycle is in _meta")
	assert.NotContains(t, tools["text__upper"].Description, "blessed", "never in the description")
	assert.NotContains(t, tools, "forge_bless", "operator tools only with Options.OperatorVerbs")
	up := tools["text__upper"]
	assert.Contains(t, up.Description, "string utilities")
	assert.Contains(t, up.Description, "func Upper(s string) string")
	schema, _ := json.Marshal(up.InputSchema)
	assert.Contains(t, string(schema), `"s"`)

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "text__upper", Arguments: map[string]any{"s": "hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	o := outcomeOf(t, res)
	assert.JSONEq(t, `"HI"`, string(o.Value))
	assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "lower", "args": map[string]any{"s": "HI"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	o = outcomeOf(t, res)
	assert.JSONEq(t, `"hi"`, string(o.Value))
	assert.Equal(t, forge.SourceGenerated, o.Meta.ProgramSource)
	assert.Equal(t, 1, o.Meta.ProviderCalls)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "nope", "method": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "caller", outcomeOf(t, res).Err.Class)

	for len(changed) > 0 {
		<-changed
	}
	operator, err := forge.Open(forge.Options{Store: store, NoEvents: true}) // another process
	require.NoError(t, err)
	defer operator.Close()
	require.NoError(t, operator.Bless("text", "lower", false))
	require.NoError(t, operator.AddRole(registry.Contract{Role: "calc", Purpose: "arithmetic", Methods: map[string]string{"add": "func Add(a, b int) int"}}))
	deadline := time.After(hang)
	for {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("no tools/list_changed after another process added a role (a hang)")
		}
		if _, ok := listTools(t, cs)["calc__add"]; ok {
			break
		}
	}
	lowerDesc := tools["text__lower"].Description
	for listTools(t, cs)["text__lower"].Meta[MetaLifecycle] != "blessed" {
		select {
		case <-deadline:
			t.Fatal("the bless never reached the tool's _meta (a hang)")
		case <-time.After(10 * time.Millisecond):
		}
	}
	assert.Equal(t, lowerDesc, listTools(t, cs)["text__lower"].Description, "byte-identical across generation and bless")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_roles", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "string utilities")
}

func listTools(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	out := map[string]*sdk.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		out[tool.Name] = tool
	}
	return out
}

func outcomeOf(t *testing.T, res *sdk.CallToolResult) forge.Outcome {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(b, &o))
	return o
}

// connectInMemory connects c to s over in-memory transports (closed when the test ends).
func connectInMemory(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession {
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := c.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	return cs
}

// connectHTTP connects c to s over streamable HTTP.
func connectHTTP(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession {
	ts := httptest.NewServer(s.HTTPHandler())
	t.Cleanup(ts.Close)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
	require.NoError(t, err)
	return cs
}

func TestMCPInMemory(t *testing.T) { scenario(t, connectInMemory) }

func TestMCPStreamableHTTP(t *testing.T) { scenario(t, connectHTTP) }

func TestOperatorTools(t *testing.T) {
	f := openForge(t, t.TempDir())
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	s, err := New(f, Options{OperatorVerbs: true})
	require.NoError(t, err)
	defer s.Close()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_quarantine", Arguments: map[string]any{"role": "text", "method": "upper"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	a, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Quarantined, a.Lifecycle)
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_bless", Arguments: map[string]any{"role": "text", "method": "upper"}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "a quarantined artifact cannot be blessed")
}
