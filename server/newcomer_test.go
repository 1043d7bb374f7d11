package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// TestAgentBadInputOverHTTP: the MCP test's agent (mcp.TestAgentBadInputAtEveryStep) over HTTP.
// A contract whose JSON cannot be read answered in encoding/json's words ("unexpected EOF", "json:
// cannot unmarshal string into Go struct field Contract.methods ...") with no field, and a call's
// argument of the wrong type with no next step; each now says where or which field and what to
// send, and the role defined and the code written still answer.
func TestAgentBadInputOverHTTP(t *testing.T) {
	f := freshForge(t)
	ts := httptest.NewServer(New(f, Options{DefineRoles: forge.DefineSwitches{Allow: true}}))
	defer ts.Close()
	for _, c := range []struct{ body, field, want string }{
		{`{"role":"words",`, "", `not valid JSON: unexpected EOF (at line 1, column 16); write one JSON object, e.g. {"role"`},
		{`[1]`, "", "a contract is a JSON object, got a JSON array"},
		{`{"role":"words","purpose":"p","methods":"WordCount"}`, "methods", `methods: got a JSON string, want an object, e.g. "methods": {`},
		{`{"role":"words","purpose":"p","limits":{"timeout":2}}`, "limits.timeout", "limits.timeout: got a JSON number, want a string"},
	} {
		resp, body := do(t, "POST", ts.URL+"/v1/roles", "", c.body)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, c.body)
		var got defineResponse
		require.NoError(t, json.Unmarshal(body, &got), string(body))
		require.NotEmpty(t, got.Problems, string(body))
		assert.Equal(t, c.field, got.Problems[0].Field, c.body)
		assert.Contains(t, got.Problems[0].Message, c.want, c.body)
		assert.NotContains(t, string(body), "Go struct", c.body)
	}
	resp, body := do(t, "POST", ts.URL+"/v1/roles", "", wordsContract)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", `{"s":"a b"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

	// A body that is not JSON says where and, for the usual slips, which one.
	resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", `{'s':'a b'}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "the request body is not JSON (line 1, column 2: invalid character")
	assert.Contains(t, string(body), "JSON strings and keys take double quotes")

	resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", `{"s":3}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "param s: want string")
	assert.Contains(t, string(body), "(hint: give each parameter a JSON value of its Go type", "what to send next")

	resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", `{"s":"`+strings.Repeat("a ", 1<<20)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, string(body), "send smaller args")

	resp, body = do(t, "POST", ts.URL+"/v1/call/words/word_count", "", `{"s":"a b c"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	assert.JSONEq(t, `3`, string(o.Value))
	assert.Zero(t, o.Meta.ProviderCalls, "the stored code, no model call")
}
