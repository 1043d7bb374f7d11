package mcp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// TestAgentBadInputAtEveryStep: an agent meeting forge for the first time defines its own role
// and calls it, getting something wrong at every step. Each refusal says what to do next (no Go
// type names, no bare "unknown tool"), and nothing stored is lost: the role it defined and the
// code its first good call wrote still answer, with no further model call.
func TestAgentBadInputAtEveryStep(t *testing.T) {
	t.Run("memory", func(t *testing.T) { agentBadInput(t, connectInMemory) })
	t.Run("http", func(t *testing.T) { agentBadInput(t, connectHTTP) }) // the fast path of tools/call too
}

func agentBadInput(t *testing.T, connect func(t *testing.T, s *Server, c *sdk.Client) *sdk.ClientSession) {
	f, _ := agentForge(t)
	s, err := New(f, Options{DefineRoles: forge.DefineSwitches{Allow: true}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	cs := connect(t, s, sdk.NewClient(&sdk.Implementation{Name: "newcomer", Version: "1"}, nil))
	t.Cleanup(func() { cs.Close() })
	ctx := context.Background()
	call := func(name string, args any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err, name)
		return res
	}
	text := func(res *sdk.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}

	for _, c := range []struct {
		contract map[string]any
		want     string
	}{
		{map[string]any{"role": "words", "purpose": "p", "methods": "WordCount"}, `methods: got a JSON string, want an object, e.g. "methods": {"upper": "func Upper(s string) string"}`},
		{map[string]any{"role": "words", "purpose": "p", "methods": map[string]any{"word_count": 3}}, `methods: got a JSON number, want a string`},
		{map[string]any{"role": "Wörds count", "purpose": "p", "methods": map[string]any{"n": "func N() int"}}, "use lower-case letters, digits and _"},
		{map[string]any{"role": "words", "purpose": "p", "methods": map[string]any{"word_count": "func WordCount(s string"}}, "write it as a Go declaration"},
		{map[string]any{"role": "words", "purpose": "p", "methods": map[string]any{"word_count": "func WordCount(s string) int"}, "capabilites": map[string]any{}}, "a contract takes role, purpose, methods"},
	} {
		res := call("forge_define_role", c.contract)
		require.True(t, res.IsError, "%v", c.contract)
		assert.Contains(t, text(res), c.want)
		assert.NotContains(t, text(res), "Go struct", "no Go type names")
	}
	_, err = f.Store().Role("words")
	require.Error(t, err, "nothing refused was stored")

	res := call("forge_define_role", wordsContract)
	require.False(t, res.IsError, text(res))
	res = call("words__word_count", map[string]any{"s": "one two"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, 1, outcomeOf(t, res).Meta.ProviderCalls)

	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{"s": 3}, "give each parameter a"},
		{map[string]any{"s": []any{"a"}}, "give each parameter a"},
		{map[string]any{"text": "a b"}, "WordCount takes (s string)"},
		{map[string]any{}, "missing argument s (string)"},
		{map[string]any{"s": strings.Repeat("a ", 1<<20)}, ""}, // large, but under the role's memory: an answer
	} {
		res := call("words__word_count", c.args)
		if c.want == "" {
			require.False(t, res.IsError, text(res))
			assert.JSONEq(t, `1048576`, string(outcomeOf(t, res).Value))
			continue
		}
		require.True(t, res.IsError, "%v", c.args)
		assert.Contains(t, text(res), c.want)
	}

	for name, want := range map[string]string{
		"words__nope":  `no tool "words__nope": role words declares no method nope; its tools are words__word_count`,
		"nope__x":      `no tool "nope__x": there is no role nope; define it with forge_define_role`,
		"word_count":   `no tool "word_count": the tools are forge's own (forge_call, forge_roles, ...) and one ROLE__METHOD`,
		"../etc__pass": `no tool "../etc__pass": the tools are forge's own`,
	} {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want, name)
		assert.Contains(t, err.Error(), "tools/list", name)
	}

	before, err := f.Store().Role("words")
	require.NoError(t, err)
	res = call("forge_define_role", map[string]any{"role": "words", "purpose": "p", "methods": "oops"})
	require.True(t, res.IsError, "a malformed redefinition is refused")
	after, err := f.Store().Role("words")
	require.NoError(t, err)
	assert.Equal(t, before.Fingerprint, after.Fingerprint, "the role it defined is kept as it was")

	res = call("words__word_count", map[string]any{"s": "a b c"})
	require.False(t, res.IsError, text(res))
	o := outcomeOf(t, res)
	assert.JSONEq(t, `3`, string(o.Value), "the code its first good call wrote still answers")
	assert.Equal(t, forge.SourcePersisted, o.Meta.ProgramSource)
	assert.Zero(t, o.Meta.ProviderCalls)
}
