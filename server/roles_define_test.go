package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	forgemcp "github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
)

const wordsOK = "package artifact\n\nimport \"strings\"\n\nfunc WordCount(s string) int { return len(strings.Fields(s)) }\n"

const wordsContract = `{"role":"words","purpose":"count things in text","methods":{"word_count":"func WordCount(s string) int"},
 "docs":{"word_count":{"description":"Counts the words of a text.","params":{"s":"the text"}}}}`

// freshForge is a forge on a fresh store (no role) whose provider answers words.word_count.
func freshForge(t *testing.T) *forge.Forge {
	t.Helper()
	line, _ := json.Marshal(map[string]any{"role": "words", "method": "word_count", "kind": "generate", "attempt": 1, "code": wordsOK})
	p, err := replay.New("test", line)
	require.NoError(t, err)
	f, err := forge.Open(forge.Options{Store: t.TempDir(), Provider: p, DefaultSandbox: "yaegi"})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// The "done when" over HTTP: a fresh store, POST /v1/roles (refused until allowed, a dry
// run, the definition), GET /v1/roles/{role}, GET /v1/tools, POST /v1/call generating on the first
// call and running the stored code with no provider call on the second.
func TestAgentDefinesRoleOverHTTP(t *testing.T) {
	f := freshForge(t)
	off := httptest.NewServer(New(f, Options{}))
	defer off.Close()
	resp, body := do(t, "POST", off.URL+"/v1/roles", "", wordsContract)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, string(body), "--allow-define-roles")
	assert.Contains(t, string(body), "FORGE_ALLOW_DEFINE_ROLES=1")

	ts := httptest.NewServer(New(f, Options{DefineRoles: forge.DefineSwitches{Allow: true}}))
	defer ts.Close()
	form, err := http.Post(ts.URL+"/v1/roles", "text/plain", strings.NewReader(wordsContract)) // what a page of another site can send
	require.NoError(t, err)
	form.Body.Close()
	assert.Equal(t, http.StatusUnsupportedMediaType, form.StatusCode, "a definition needs a JSON request")
	resp, body = do(t, "POST", ts.URL+"/v1/roles?dry_run=1", "", `{"role":"words","purpose":"p","methods":{"word_count":"func Count(s string) int"},"capabilities":{"fs":true}}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var checked defineResponse
	require.NoError(t, json.Unmarshal(body, &checked))
	assert.Len(t, checked.Problems, 2, "%s", body)
	resp, body = do(t, "POST", ts.URL+"/v1/roles?dry_run=1", "", wordsContract)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	_, err = f.Store().Role("words")
	require.Error(t, err, "a dry run writes nothing")

	resp, body = do(t, "POST", ts.URL+"/v1/roles", "", wordsContract)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var defined defineResponse
	require.NoError(t, json.Unmarshal(body, &defined))
	assert.Equal(t, "new", defined.Change)
	assert.Equal(t, []string{"words__word_count"}, defined.Tools)

	resp, body = do(t, "GET", ts.URL+"/v1/roles/words", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"purpose":"count things in text"`)

	resp, body = do(t, "GET", ts.URL+"/v1/tools?format=openai", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var tools []forge.OpenAITool
	require.NoError(t, json.Unmarshal(body, &tools))
	require.Len(t, tools, 1)
	assert.Equal(t, "words__word_count", tools[0].Function.Name)
	assert.True(t, tools[0].Function.Strict)
	resp, body = do(t, "GET", ts.URL+"/v1/tools?format=yaml", "", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "use mcp, openai or anthropic")

	for i, want := range []struct {
		value    string
		provider int
		source   string
	}{{"3", 1, forge.SourceGenerated}, {"2", 0, forge.SourcePersisted}} {
		args := []string{`{"s":"one two three"}`, `{"s":"a b"}`}[i]
		resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", args)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var o forge.Outcome
		require.NoError(t, json.Unmarshal(body, &o))
		require.True(t, o.OK, "%s", body)
		assert.JSONEq(t, want.value, string(o.Value))
		assert.Equal(t, want.provider, o.Meta.ProviderCalls)
		assert.Equal(t, want.source, o.Meta.ProgramSource)
	}
}

// TestDefineRolesWithClientIdentities: with clients configured, only a client whose identity has
// define_roles may define (the refusal names the field), a client of some roles may post a
// definition (it is not a listing), another client may not change the role, and /v1/tools over
// every role needs "*" while ?role= works for one's own.
func TestDefineRolesWithClientIdentities(t *testing.T) {
	f := freshForge(t)
	cs, err := ParseClients([]byte(fmt.Sprintf(`
- {name: alice, token: %s, roles: [words], define_roles: true}
- {name: bob, token: %s, roles: "*"}
- {name: carol, token: %s, roles: "*", define_roles: true}
`, aliceToken, bobToken, carolToken)))
	require.NoError(t, err)
	ts := httptest.NewServer(New(f, Options{Clients: cs, DefineRoles: forge.DefineSwitches{Allow: true}}))
	defer ts.Close()

	resp, body := do(t, "POST", ts.URL+"/v1/roles", bobToken, wordsContract)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, string(body), "define_roles: true")
	resp, body = do(t, "POST", ts.URL+"/v1/roles", aliceToken, wordsContract)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	rec, err := f.Store().Role("words")
	require.NoError(t, err)
	assert.Equal(t, "alice", rec.DefinedBy)

	resp, body = do(t, "POST", ts.URL+"/v1/roles", carolToken, `{"role":"words","purpose":"mine now","methods":{"word_count":"func WordCount(s string) int"}}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, string(body), `defined by client \"alice\"`)

	// A client of some roles defines only those: another name may be a role another client
	// lists that the operator has not added yet, which that client would call as alice wrote it.
	resp, body = do(t, "POST", ts.URL+"/v1/roles", aliceToken, `{"role":"invoices","purpose":"p","methods":{"total":"func Total(xs []int) int"}}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `may define only the roles it may call (words)`)
	_, err = f.Store().Role("invoices")
	assert.ErrorIs(t, err, registry.ErrNotFound, "nothing stored")

	resp, _ = do(t, "GET", ts.URL+"/v1/tools", aliceToken, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, body = do(t, "GET", ts.URL+"/v1/tools?role=words&format=anthropic", aliceToken, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"input_schema"`)
	resp, _ = do(t, "GET", ts.URL+"/v1/tools?role=other", aliceToken, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	var who []string
	f.Flush()
	evs, err := forge.ReadEvents(f.Store().LocalDir())
	require.NoError(t, err)
	for _, e := range evs {
		if e.Action == forge.OpDefineRole {
			who = append(who, fmt.Sprintf("%s %v", e.Who, e.OK))
		}
	}
	assert.Equal(t, []string{"bob false", "alice true", "carol false", "alice false"}, who)
}

// TestDefineRolesOverMCPWithClientIdentities: over /mcp the client's identity decides too (its
// define_roles becomes a scope of its session), and the role is recorded as the client's.
func TestDefineRolesOverMCPWithClientIdentities(t *testing.T) {
	f := freshForge(t)
	cs, err := ParseClients([]byte(fmt.Sprintf(`
- {name: alice, token: %s, roles: "*", define_roles: true}
- {name: bob, token: %s, roles: "*"}
- {name: carol, token: %s, roles: [other], define_roles: true}
`, aliceToken, bobToken, carolToken)))
	require.NoError(t, err)
	define := forge.DefineSwitches{Allow: true}
	ms, err := forgemcp.New(f, forgemcp.Options{DefineRoles: define})
	require.NoError(t, err)
	t.Cleanup(ms.Close)
	ts := httptest.NewServer(New(f, Options{Clients: cs, DefineRoles: define, Extra: map[string]http.Handler{"/mcp": cs.MCP(ms.HTTPHandler())}}))
	t.Cleanup(ts.Close) // after the sessions' Close (cleanups run last first): Close waits for their streams
	var contract map[string]any
	require.NoError(t, json.Unmarshal([]byte(wordsContract), &contract))

	res, err := mcpSession(t, ts.URL+"/mcp", bobToken).CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_define_role", Arguments: contract})
	require.NoError(t, err)
	require.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, `client "bob" may not define roles`)
	res, err = mcpSession(t, ts.URL+"/mcp", carolToken).CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_define_role", Arguments: contract})
	require.NoError(t, err)
	require.True(t, res.IsError, "a client of some roles defines only those")
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, `client "carol" may define only the roles it may call (other)`)
	res, err = mcpSession(t, ts.URL+"/mcp", aliceToken).CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_define_role", Arguments: contract})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	rec, err := f.Store().Role("words")
	require.NoError(t, err)
	assert.Equal(t, "alice", rec.DefinedBy)
}
