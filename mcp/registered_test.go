package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// The tests run forges with the backends, providers and stores the binary ships.
	_ "github.com/artifactforge/forge/forge/all"
	"github.com/artifactforge/forge/sandbox"
)

// TestContractSchemaNamesTheRegisteredBackends: the sandbox enum of the contract schema agents
// see is the backends this program registered that an agent may name (not an opt-in one), not a
// list written here.
func TestContractSchemaNamesTheRegisteredBackends(t *testing.T) {
	var s struct {
		Properties struct {
			Sandbox struct {
				Enum []string `json:"enum"`
			} `json:"sandbox"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(contractSchema(), &s))
	want := []string{""}
	for _, b := range sandbox.Backends() {
		if !b.OptIn {
			want = append(want, b.Name)
		}
	}
	assert.Equal(t, want, s.Properties.Sandbox.Enum)
	assert.Contains(t, want, "wasm", "forge/all registers the shipped backends")
	if b, ok := sandbox.LookupBackend("native"); ok && b.OptIn {
		assert.NotContains(t, s.Properties.Sandbox.Enum, "native", "forge refuses an agent's role an opt-in backend")
	}
}
