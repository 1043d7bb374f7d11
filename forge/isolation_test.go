package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// TestIsolatedRoleEndToEnd calls a role with process isolation through the forge: the gate
// compiles and runs its examples in workers, and code whose initializer blows the memory cap is
// refused as the code's failure (repaired from the cassette), never run in this process.
func TestIsolatedRoleEndToEnd(t *testing.T) {
	bomb := "package artifact\n\nvar big = make([]byte, 1536<<20)\n\nfunc init() {\n\tfor i := range big {\n\t\tbig[i] = 1\n\t}\n}\n\nfunc Upper(s string) string { return s }\n"
	good := "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"
	f := openForge(t, t.TempDir(), cassette(t,
		line{Role: "iso", Method: "upper", Kind: "generate", Attempt: 1, Code: bomb},
		line{Role: "iso", Method: "upper", Kind: "generate", Attempt: 2, Code: good},
		line{Role: "iso", Method: "upper", Kind: "repair", Attempt: 2, Code: good},
	))
	require.NoError(t, f.AddRole(registry.Contract{Role: "iso", Purpose: "text in process isolation",
		Methods: map[string]string{"upper": "func Upper(s string) string"},
		Limits:  &registry.Limits{Memory: "64MB", Isolation: "process"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{
			{Method: "upper", Args: json.RawMessage(`{"s":"ab"}`), Expect: json.RawMessage(`"AB"`)}}}}))
	o := f.Call(context.Background(), "iso", "upper", json.RawMessage(`{"s":"forge"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"FORGE"`, string(o.Value))
	assert.Equal(t, 2, o.Meta.ProviderCalls, "the memory bomb fails the gate as the code's fault; a second answer passes")
	o = f.Call(context.Background(), "iso", "upper", json.RawMessage(`{"s":"again"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"AGAIN"`, string(o.Value))
	assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)
}
