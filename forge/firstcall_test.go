package forge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// verContract is issue 23's zero-argument method: func Get() in its several result shapes.
func verContract(decl string) registry.Contract {
	return registry.Contract{Role: "ver", Purpose: "the version", Methods: map[string]string{"get": decl}}
}

// Issue 23 item 1: a zero-argument method called with no args (nil, as `forge call ver get`
// sends them) is answered by the call that generates it, in every result shape and backend; the
// gate's own run of the call's args was skipped for nil args, so the first call said ok with no
// value.
func TestZeroArgMethodAnswersItsGeneratingCall(t *testing.T) {
	shapes := []struct{ decl, code, want string }{
		{"func Get() string", `func Get() string { return "v1" }`, `"v1"`},
		{"func Get() (string, error)", `func Get() (string, error) { return "v1", nil }`, `"v1"`},
		{"func Get() error", `func Get() error { return nil }`, `null`},
		{"func Get() V", "type V struct{ N int `json:\"n\"` }\n\nfunc Get() V { return V{N: 7} }", `{"n":7}`},
	}
	for _, be := range []string{"yaegi", "wasm"} {
		for _, s := range shapes {
			t.Run(be+"/"+s.decl, func(t *testing.T) {
				f := openForge(t, t.TempDir(), codeAnswers("package artifact\n\n"+s.code+"\n"), func(o *Options) { o.DefaultSandbox = be })
				require.NoError(t, f.AddRole(verContract(s.decl)))
				o := f.Call(context.Background(), "ver", "get", nil)
				require.True(t, o.OK, "%+v", o.Err)
				assert.Equal(t, SourceGenerated, o.Meta.ProgramSource)
				require.NotEmpty(t, o.Value, "the generating call must answer")
				assert.JSONEq(t, s.want, string(o.Value))
				o = f.Call(context.Background(), "ver", "get", nil)
				require.True(t, o.OK, "%+v", o.Err)
				assert.Equal(t, SourcePersisted, o.Meta.ProgramSource)
				assert.JSONEq(t, s.want, string(o.Value))
			})
		}
	}
}

// The same skipped run let code that fails on the call's own (empty) args be persisted as if it
// had passed: now the failure goes back to the model like any other.
func TestZeroArgMethodGeneratingRunIsVerified(t *testing.T) {
	panics := "package artifact\n\nfunc Get() string { var m map[string]int; m[\"x\"] = 1; return \"never\" }\n"
	ok := "package artifact\n\nfunc Get() string { return \"v1\" }\n"
	p := codeAnswers(panics, ok)
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(verContract("func Get() string")))
	o := f.Call(context.Background(), "ver", "get", nil)
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `"v1"`, string(o.Value))
	assert.Equal(t, 2, o.Meta.ProviderCalls)
	assert.Len(t, p.requests(), 2)
}

// Siblings: the repair path (persisted code fails on the call) and a regeneration asked for the
// next call (MarkRegenerate) answer a no-args call with the new code's value too.
func TestZeroArgMethodAnswersItsRepairingAndRegeneratingCalls(t *testing.T) {
	panics := "package artifact\n\nfunc Get() string { var m map[string]int; m[\"x\"] = 1; return \"never\" }\n"
	store := t.TempDir()
	op := openForge(t, store, codeAnswers(panics))
	require.NoError(t, op.AddRole(verContract("func Get() string")))
	// An operator's regeneration runs no args: the failing code is persisted as it is.
	require.True(t, op.Regenerate(context.Background(), "ver", "get").OK)
	require.NoError(t, op.Close())

	// This process keeps no sample of real calls: the next regeneration's new answer ("v3") is
	// what this test expects, not a change safe regeneration would weigh (shadow_test.go does).
	f := openForge(t, store, codeAnswers("package artifact\n\nfunc Get() string { return \"v2\" }\n"), func(o *Options) { o.SampleEvery = -1 })
	o := f.Call(context.Background(), "ver", "get", nil)
	require.True(t, o.OK, "%+v", o.Err)
	assert.True(t, o.Meta.RepairAttempted)
	require.NotEmpty(t, o.Value)
	assert.JSONEq(t, `"v2"`, string(o.Value))

	require.NoError(t, f.MarkRegenerate("ver", "get"))
	f2 := openForge(t, store, codeAnswers("package artifact\n\nfunc Get() string { return \"v3\" }\n"))
	o = f2.Call(context.Background(), "ver", "get", nil)
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, SourceRegenerated, o.Meta.ProgramSource)
	require.NotEmpty(t, o.Value)
	assert.JSONEq(t, `"v3"`, string(o.Value))
}

// A call with no args (nil) to a method that has parameters forges its code without running it
// (the HumanEval scenario's first calls): it is the zero-argument method whose nil args are a
// whole call. A variadic-only method is such a method too.
func TestNoArgsForgeWithoutRunningOnlyWhenTheMethodTakesArgs(t *testing.T) {
	f := openForge(t, t.TempDir(), codeAnswers(upperOK))
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", nil)
	require.True(t, o.OK, "%+v", o.Err)
	assert.Empty(t, o.Value)
	assert.Equal(t, 1, o.Meta.ArtifactGen)

	f = openForge(t, t.TempDir(), codeAnswers("package artifact\n\nfunc Sum(xs ...int) int { n := 0; for _, x := range xs { n += x }; return n + 1 }\n"))
	require.NoError(t, f.AddRole(registry.Contract{Role: "num", Purpose: "sums", Methods: map[string]string{"sum": "func Sum(xs ...int) int"}}))
	o = f.Call(context.Background(), "num", "sum", nil)
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `1`, string(o.Value), "the generating call of a variadic-only method answers")
}

// Issue 23 item 7: a store that cannot read the role is the forge's failure, as the
// same store failure is when the artifact is loaded (extrinsic/internal), never the caller's args; a role that does
// not exist stays the caller's. Calls, delegated calls and operator verbs agree.
func TestRoleStoreErrorIsInternalNotCaller(t *testing.T) {
	store := t.TempDir()
	f0 := openForge(t, store, nil)
	require.NoError(t, f0.AddRole(verContract("func Get() string")))
	require.NoError(t, f0.Close())
	// The role's record becomes unreadable: a directory where its file was.
	path := filepath.Join(store, "roles", "ver.json")
	_, err := os.Stat(path)
	require.NoError(t, err, "the directory store keeps a role in roles/ROLE.json")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Remove(path+".good"))
	require.NoError(t, os.MkdirAll(filepath.Join(path, "x"), 0o755))

	f := openForge(t, store, nil)
	for name, o := range map[string]Outcome{
		"call":  f.Call(context.Background(), "ver", "get", nil),
		"regen": f.Regenerate(context.Background(), "ver", "get"),
		"edit":  f.Edit(context.Background(), "ver", "get", "package artifact\n\nfunc Get() string { return \"x\" }\n"),
	} {
		require.False(t, o.OK, name)
		assert.Equal(t, "store", o.Err.Type, "%s: %+v", name, o.Err)
		// The class of the same failure while loading the artifact: extrinsic, rule internal.
		assert.Equal(t, "extrinsic", o.Err.Class, "%s: %+v", name, o.Err)
		assert.Equal(t, "internal", o.Err.Rule, "%s: %+v", name, o.Err)
		assert.Contains(t, o.Err.Message, "forge doctor", name)
	}
	o := f.Call(context.Background(), "nosuch", "get", nil)
	require.False(t, o.OK)
	assert.Equal(t, "unknown_role", o.Err.Type)
	assert.Equal(t, "caller", o.Err.Class)
}
