package mcp

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider/replay"
)

const wordsOK = "package artifact\n\nimport \"strings\"\n\nfunc WordCount(s string) int { return len(strings.Fields(s)) }\n"

var wordsContract = map[string]any{
	"role": "words", "purpose": "count things in text",
	"methods": map[string]any{"word_count": "func WordCount(s string) int"},
	"docs":    map[string]any{"word_count": map[string]any{"description": "Counts the words of a text.", "params": map[string]any{"s": "the text"}}},
}

// agentForge is a forge on a fresh store whose provider answers words.word_count (twice: a
// generation and a regeneration), counting its calls.
func agentForge(t *testing.T) (*forge.Forge, any) {
	t.Helper()
	var lines []byte
	for i, code := range []string{wordsOK, wordsOK + "// v2\n"} {
		l, _ := json.Marshal(map[string]any{"role": "words", "method": "word_count", "kind": "generate", "attempt": i + 1, "code": code})
		lines = append(append(lines, l...), '\n')
	}
	p, err := replay.New("test", lines)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, p
}

// agentSession is the "done when" for one transport: connect to a fresh store, define a
// role with forge_define_role, receive list_changed, see its method as a tool, call it (generated
// in that call), call it again with zero provider calls, record and recall a lesson; descriptions
// identical after a regeneration.
func agentSession(t *testing.T, connect func(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession) {
	f, _ := agentForge(t)
	s, err := New(f, Options{DefineRoles: forge.DefineSwitches{Allow: true}})
	require.NoError(t, err)
	defer s.Close()
	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	cs := connect(t, s, client)
	defer cs.Close()
	ctx := context.Background()
	require.NotContains(t, listTools(t, cs), "words__word_count")

	bad := map[string]any{"role": "words", "purpose": "count", "methods": map[string]any{"word_count": "func Count(s string) int"}, "capabilities": map[string]any{"fs": true}}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_check_contract", Arguments: bad})
	require.NoError(t, err)
	require.True(t, res.IsError)
	var checked forge.DefineResult
	remarshal(t, res.StructuredContent, &checked)
	assert.Len(t, checked.Problems, 2, "the unknown capability and the signature's name: %v", checked.Problems)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_define_role", Arguments: wordsContract})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	var defined forge.DefineResult
	remarshal(t, res.StructuredContent, &defined)
	assert.Equal(t, []string{"words__word_count"}, defined.Tools)
	select {
	case <-changed:
	case <-time.After(hang):
		t.Fatal("no tools/list_changed after forge_define_role (a hang)")
	}
	tool := listTools(t, cs)["words__word_count"]
	require.NotNil(t, tool, "listed at once")
	desc := tool.Description
	assert.Contains(t, desc, "Counts the words of a text.")
	assert.Regexp(t, `^\(defined by agent "[^"]+"\) `, desc, "an agent's text, marked as its for other agents' models")
	assert.Equal(t, "none", tool.Meta[MetaLifecycle])
	assert.True(t, tool.Annotations.ReadOnlyHint)
	in, _ := json.Marshal(tool.InputSchema)
	assert.Contains(t, string(in), `"description":"the text"`)
	value := tool.OutputSchema.(map[string]any)["properties"].(map[string]any)["value"].(map[string]any)
	assert.Equal(t, "integer", value["type"], "the outputSchema's value is the result type's")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "words__word_count", Arguments: map[string]any{"s": "one two three"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	o := outcomeOf(t, res)
	assert.JSONEq(t, `3`, string(o.Value), "the answer in the generating call")
	assert.Equal(t, forge.SourceGenerated, o.Meta.ProgramSource)
	assert.Equal(t, 1, o.Meta.ProviderCalls)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "words__word_count", Arguments: map[string]any{"s": "a b"}})
	require.NoError(t, err)
	o = outcomeOf(t, res)
	assert.JSONEq(t, `2`, string(o.Value))
	assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)

	// Records and recalls a lesson about the role it defined (knowledge.go).
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_record", Arguments: map[string]any{
		"content": "word_count splits on any white space", "reasoning": "seen on tabs", "domain": "words", "category": "fact"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forge_recall", Arguments: map[string]any{"query": "white space", "domain": "words"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	var recalled struct {
		Lessons []struct {
			Content string `json:"content"`
		} `json:"lessons"`
	}
	remarshal(t, res.StructuredContent, &recalled)
	require.Len(t, recalled.Lessons, 1)
	assert.Equal(t, "word_count splits on any white space", recalled.Lessons[0].Content)

	require.True(t, f.Regenerate(ctx, "words", "word_count").OK)
	require.NoError(t, s.Sync())
	after := listTools(t, cs)["words__word_count"]
	assert.Equal(t, desc, after.Description, "byte-identical across a regeneration")
	assert.EqualValues(t, 2, after.Meta[MetaGeneration])
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, to))
}

func TestAgentDefinesRoleInMemory(t *testing.T) { agentSession(t, connectInMemory) }

// Over stdio framing: newline-delimited JSON-RPC through pipes, as `forge mcp` serves it.
func TestAgentDefinesRoleStdio(t *testing.T) {
	agentSession(t, func(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession {
		sr, cw := io.Pipe()
		cr, sw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = s.Run(ctx, &sdk.IOTransport{Reader: sr, Writer: sw})
		}()
		t.Cleanup(func() { cancel(); cw.Close(); sw.Close(); <-done })
		cs, err := c.Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
		require.NoError(t, err)
		return cs
	})
}

func TestAgentDefinesRoleStreamableHTTP(t *testing.T) { agentSession(t, connectHTTP) }

// TestDefineRefusedUnlessAllowed: defining roles is off by default, and the refusal says how to
// turn it on; nothing is written.
func TestDefineRefusedUnlessAllowed(t *testing.T) {
	f, _ := agentForge(t)
	s, err := New(f, Options{})
	require.NoError(t, err)
	defer s.Close()
	cs := connectInMemory(t, s, sdk.NewClient(&sdk.Implementation{Name: "agent"}, nil))
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_define_role", Arguments: wordsContract})
	require.NoError(t, err)
	require.True(t, res.IsError)
	text := res.Content[0].(*sdk.TextContent).Text
	assert.Contains(t, text, "--allow-define-roles")
	assert.Contains(t, text, "FORGE_ALLOW_DEFINE_ROLES=1")
	_, err = f.Store().Role("words")
	assert.Error(t, err, "nothing written")
}
