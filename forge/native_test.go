package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestContractOnNative: a contract that names the native sandbox is generated, verified (its
// acceptance example), persisted and called there, the second call from the stored artifact.
func TestContractOnNative(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a native worker")
	}
	b, ok := sandbox.LookupBackend("native")
	require.True(t, ok)
	if err := b.Usable(); err != nil {
		t.Skip(err)
	}
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, t.TempDir(), p)
	c := textContract()
	c.Sandbox = "native"
	require.NoError(t, f.AddRole(c))
	rt, err := f.roleRuntime("text")
	require.NoError(t, err)
	require.Equal(t, "native", rt.backend)
	for i, want := range []string{SourceGenerated, SourcePersisted} {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"hello"}`))
		require.True(t, o.OK, "call %d: %+v", i, o.Err)
		assert.JSONEq(t, `"HELLO"`, string(o.Value))
		assert.Equal(t, want, o.Meta.ProgramSource, "call %d", i)
	}
}
