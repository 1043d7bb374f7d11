package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsCommand: `forge tools --format openai` prints every declared method (none generated
// yet) as a strict function tool that passes the JSON Schema of OpenAI's format; anthropic and
// mcp print their shapes; an unknown format is a usage error naming the formats.
func TestToolsCommand(t *testing.T) {
	store := t.TempDir()
	contract := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(contract, []byte(`{"role":"text","purpose":"string tools","methods":{"upper":"func Upper(s string) string","count":"func Count(s string, sep string) int"},
	  "docs":{"upper":{"description":"Upper-cases a text.","params":{"s":"the text"}}}}`), 0o644))
	code, _, stderr := runCLI(t, "--store", store, "role", "add", "-f", contract)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := runCLI(t, "--store", store, "role", "show", "text", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"defined_by": "cli`, "role add records its client")

	code, out, stderr = runCLI(t, "--store", store, "tools", "--format", "openai")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile("../../forge/testdata/openai_tools_strict.schema.json")
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	comp := jsonschema.NewCompiler()
	require.NoError(t, comp.AddResource("openai.json", doc))
	sch, err := comp.Compile("openai.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
	require.NoError(t, err, out)
	require.NoError(t, sch.Validate(inst), out)
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &tools))
	require.Len(t, tools, 2)
	assert.Equal(t, "text__count", tools[0]["function"].(map[string]any)["name"])

	code, out, stderr = runCLI(t, "--store", store, "tools", "--format", "anthropic", "--role", "text")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"input_schema"`)
	assert.Contains(t, out, `"description": "the text"`)
	code, out, stderr = runCLI(t, "--store", store, "tools")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"outputSchema"`)
	assert.Contains(t, out, `"readOnlyHint": true`)

	code, _, stderr = runCLI(t, "--store", store, "tools", "--format", "langchain")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "use mcp, openai or anthropic")
	code, _, stderr = runCLI(t, "--store", store, "tools", "--role", "nope")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "nope")
}

func TestDefineFlags(t *testing.T) {
	code, _, stderr := runCLI(t, "--store", t.TempDir(), "mcp", "--allow-redefine-roles")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--allow-redefine-roles needs --allow-define-roles")
	t.Setenv("FORGE_ALLOW_DEFINE_ROLES", "yes")
	code, _, stderr = runCLI(t, "--store", t.TempDir(), "serve", "--addr", "127.0.0.1:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "FORGE_ALLOW_DEFINE_ROLES")
}
