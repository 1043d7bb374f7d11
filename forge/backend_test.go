package forge

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestChooseDefault(t *testing.T) {
	noToolchain := errors.New("no Go toolchain")
	inproc := sandbox.Backend{Name: "yaegi", ContainsIsolated: sandbox.IsolationProcess}
	isolated := Placement{Backend: "yaegi", Isolation: sandbox.IsolationProcess}
	bare := sandbox.Backend{Name: "lua"}
	wasmOK := sandbox.Backend{Name: "wasm", Contains: true}
	wasmMissing := sandbox.Backend{Name: "wasm", Contains: true, Available: func() error { return noToolchain }}
	native := sandbox.Backend{Name: "native", Contains: true, OptIn: true}
	tests := []struct {
		name     string
		operator string
		backends []sandbox.Backend
		want     Placement
		err      bool
	}{
		{"a containing backend that can run wins", "", []sandbox.Backend{wasmOK, inproc}, Placement{Backend: "wasm"}, false},
		{"never in-process yaegi unasked", "", []sandbox.Backend{inproc}, isolated, false},
		{"no toolchain: isolated yaegi", "", []sandbox.Backend{wasmMissing, inproc}, isolated, false},
		{"no backend registered", "", nil, Placement{}, true},
		{"the fallback is whichever backend registers an isolation that contains", "", []sandbox.Backend{wasmMissing, bare,
			{Name: "luajit", ContainsIsolated: "vm"}}, Placement{Backend: "luajit", Isolation: "vm"}, false},
		{"nothing that contains can run", "", []sandbox.Backend{wasmMissing, bare}, Placement{}, true},
		{"the operator names in-process yaegi", "yaegi", []sandbox.Backend{wasmOK, inproc}, Placement{Backend: "yaegi"}, false},
		{"the operator names wasm", "wasm", []sandbox.Backend{wasmOK, inproc}, Placement{Backend: "wasm"}, false},
		{"an opt-in backend is never the default, though it sorts first", "", []sandbox.Backend{native, wasmOK, inproc}, Placement{Backend: "wasm"}, false},
		{"an opt-in backend is no fallback either", "", []sandbox.Backend{native, wasmMissing, inproc}, isolated, false},
		{"an opt-in backend alone: nothing to default to", "", []sandbox.Backend{native}, Placement{}, true},
		{"the operator names the opt-in backend", "native", []sandbox.Backend{native, wasmOK, inproc}, Placement{Backend: "native"}, false},
		{"the operator names an unknown backend", "lua", []sandbox.Backend{wasmOK, inproc}, Placement{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChooseDefault(tc.operator, tc.backends)
			if tc.err {
				require.Error(t, err)
				if tc.operator != "" {
					assert.ErrorIs(t, err, ErrUnknownSandbox)
				} else {
					assert.ErrorIs(t, err, ErrNoSandbox)
					hint := "--sandbox"
					if len(tc.backends) == 0 {
						hint = "forge/all"
					}
					assert.Contains(t, err.Error(), hint, "says what to import or name")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestBuiltInBackendsRegistered: the built-in backends describe themselves; wasm and native claim
// to contain hostile code on their own, and native only where named.
func TestBuiltInBackendsRegistered(t *testing.T) {
	y, ok := sandbox.LookupBackend("yaegi")
	require.True(t, ok)
	assert.False(t, y.Contains, "in-process yaegi is no security boundary")
	w, ok := sandbox.LookupBackend("wasm")
	require.True(t, ok)
	assert.True(t, w.Contains)
	assert.False(t, w.OptIn)
	n, ok := sandbox.LookupBackend("native")
	require.True(t, ok)
	assert.True(t, n.Contains)
	assert.True(t, n.OptIn, "native is never the default")
	assert.Equal(t, "native, wasm, yaegi", sandbox.BackendNames())
}

// TestContractWithoutSandboxGetsThePlacement: a contract that names no sandbox runs where the
// forge's placement says, isolation included; one that names a backend keeps it.
func TestContractWithoutSandboxGetsThePlacement(t *testing.T) {
	f := openForge(t, t.TempDir(), nil, func(o *Options) { o.DefaultSandbox = "" })
	require.NoError(t, f.AddRole(textContract()))
	rt, err := f.roleRuntime("text")
	require.NoError(t, err)
	assert.Equal(t, f.placement.Backend, rt.backend)
	assert.Equal(t, f.placement.Isolation, rt.limits.Isolation)

	rec, err := f.store.Role("text")
	require.NoError(t, err)
	fb, err := newRoleRuntime(rec, f.opts.Budget, Placement{Backend: "yaegi", Isolation: sandbox.IsolationProcess})
	require.NoError(t, err)
	assert.Equal(t, "yaegi", fb.backend)
	assert.Equal(t, sandbox.IsolationProcess, fb.limits.Isolation)

	c := textContract()
	c.Role, c.Sandbox = "trusted", "yaegi"
	require.NoError(t, f.AddRole(c))
	rt, err = f.roleRuntime("trusted")
	require.NoError(t, err)
	assert.Equal(t, "yaegi", rt.backend)
	assert.Equal(t, "", rt.limits.Isolation)
}
