package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// keepLast stores its last argument in a package variable and returns the one before: the
// cross-caller leak of issue 22 item 10 in four lines.
const keepLast = "package artifact\n\nvar last string\n\nfunc Keep(s string) string {\n\tprev := last\n\tlast = s\n\treturn prev\n}\n"

// clientPlacements are the places a method can run: wasm, in-process yaegi, yaegi workers.
var clientPlacements = []struct {
	name, sandbox, isolation string
}{
	{"wasm", "wasm", ""},
	{"yaegi", "yaegi", ""},
	{"yaegi-process", "yaegi", sandbox.IsolationProcess},
}

func vaultForge(t *testing.T, sb, isolation, instance string) *Forge {
	t.Helper()
	if sb == "wasm" && testing.Short() {
		t.Skip("builds a wasm module with the Go toolchain")
	}
	f := openForge(t, t.TempDir(), cassette(t, line{Role: "vault", Method: "keep", Kind: "generate", Attempt: 1, Code: keepLast}))
	require.NoError(t, f.AddRole(registry.Contract{Role: "vault", Purpose: "remembers the last string it was given",
		Methods: map[string]string{"keep": "func Keep(s string) string"}, Sandbox: sb,
		Limits: &registry.Limits{Timeout: "30s", Memory: "64MB", Isolation: isolation, Instance: instance}}))
	return f
}

func keep(t *testing.T, f *Forge, client, s string) string {
	t.Helper()
	o := f.Call(WithClient(context.Background(), client), "vault", "keep", json.RawMessage(fmt.Sprintf(`{"s":%q}`, s)))
	require.True(t, o.OK, "%+v", o.Err)
	var v string
	require.NoError(t, json.Unmarshal(o.Value, &v))
	return v
}

// TestClientsNeverShareAnInstance: a method that keeps its last argument in a package variable
// never hands one client's argument to another, on every backend; each client still sees its
// own pooled state (which shows the state is there to leak).
func TestClientsNeverShareAnInstance(t *testing.T) {
	for _, pl := range clientPlacements {
		t.Run(pl.name, func(t *testing.T) {
			f := vaultForge(t, pl.sandbox, pl.isolation, "")
			assert.Equal(t, "", keep(t, f, "alice", "alice-secret"), "the generating call")
			assert.Equal(t, "", keep(t, f, "bob", "bob-1"), "bob got what alice stored")
			assert.Equal(t, "", keep(t, f, "", "anon-1"), "a call naming no client got what another client stored")
			assert.Equal(t, "alice-secret", keep(t, f, "alice", "alice-2"), "alice's own pooled state (the leak this test guards against exists)")
			assert.Equal(t, "bob-1", keep(t, f, "bob", "bob-2"))
			assert.Equal(t, "anon-1", keep(t, f, "", "anon-2"))
			for range 3 {
				assert.NotContains(t, keep(t, f, "bob", "bob-n"), "alice")
			}
			assert.GreaterOrEqual(t, f.Live().Programs, 3, "one live program per client")
		})
	}
}

// TestPerCallInstance: limits.instance "per_call" runs every call in a fresh instance, so not
// even the same client sees what its previous call stored.
func TestPerCallInstance(t *testing.T) {
	for _, pl := range clientPlacements {
		t.Run(pl.name, func(t *testing.T) {
			f := vaultForge(t, pl.sandbox, pl.isolation, "per_call")
			for i := range 4 {
				assert.Equal(t, "", keep(t, f, "alice", fmt.Sprintf("secret-%d", i)), "call %d saw a previous call's state", i)
			}
		})
	}
}

// TestOperatorDropReachesEveryClient: a rollback or bless that makes other code current drops
// the live programs of every client, not only the anonymous one's.
func TestOperatorDropReachesEveryClient(t *testing.T) {
	f := vaultForge(t, "yaegi", "", "")
	keep(t, f, "alice", "a")
	keep(t, f, "bob", "b")
	require.Equal(t, 2, f.Live().Programs)
	f.programs.drop(registry.Key{Role: "vault", Method: "keep"}, "other code")
	assert.Equal(t, 0, f.Live().Programs)
}

// TestClientProgramsShareCompiledCode: a wasm module's compiled code is shared by every client's
// program, so it counts once against the live set's memory budget: another client's program
// adds its instances, not the code again (50 clients of one method then fit the default budget).
func TestClientProgramsShareCompiledCode(t *testing.T) {
	f := vaultForge(t, "wasm", "", "")
	keep(t, f, "", "x")
	one := f.Live().Bytes
	keep(t, f, "alice", "a")
	two := f.Live().Bytes
	require.Equal(t, 2, f.Live().Programs)
	assert.Less(t, two-one, one/2, "the second client's program counted the module's compiled code again (first %d bytes, second %d)", one, two-one)
}

// TestEventsRecordTheClient: a call's event names the client it was made for, in the live
// stream and on the event log's line (aggregates keep clients apart).
func TestEventsRecordTheClient(t *testing.T) {
	f := vaultForge(t, "yaegi", "", "")
	seen := make(chan string, 16)
	f.Observe(func(e *LiveEvent) {
		if e.Call != nil {
			seen <- e.Call.Client
		}
	})
	keep(t, f, "alice", "a")
	keep(t, f, "", "b")
	assert.Equal(t, "alice", <-seen)
	assert.Equal(t, "", <-seen)

	e := Event{Role: "vault", Method: "keep", Client: "alice", OK: true}
	got := appendEvent(nil, &e)
	want, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	assert.Contains(t, string(got), `"client":"alice"`)

	var a aggregator
	ba, bb := a.add(&Event{Role: "vault", Method: "keep", Client: "alice"}), a.add(&Event{Role: "vault", Method: "keep", Client: "bob"})
	assert.NotSame(t, ba, bb, "one aggregate for two clients")
}
