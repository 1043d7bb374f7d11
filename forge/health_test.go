package forge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

const divCode = "package artifact\n\nfunc Div(a, b int) int { return a / b }\n"

// divContract: Div passes its acceptance set; it panics (intrinsic) when b is 0, an input the
// contract says nothing about.
func divContract() registry.Contract {
	return registry.Contract{Role: "calc", Purpose: "integer arithmetic",
		Methods:    map[string]string{"div": "func Div(a, b int) int"},
		Acceptance: &registry.Acceptance{Examples: []registry.Example{{Method: "div", Args: json.RawMessage(`[6, 3]`), Expect: json.RawMessage(`2`)}}}}
}

func loadArt(t *testing.T, f *Forge, role, method string) *registry.Artifact {
	t.Helper()
	f.Flush()
	a, err := f.Store().Load(role, method)
	require.NoError(t, err)
	return a
}

// Issue 22 item 5: args that alone exceed the role's memory cap are the caller's error before
// anything runs: no provider call, nothing recorded, the code's health untouched.
func TestOversizeArgsAreCallerErrors(t *testing.T) {
	store := t.TempDir()
	p := codeAnswers("package artifact\n\nfunc Size(s string) int { return len(s) }\n")
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(registry.Contract{Role: "blob", Purpose: "sizes", Methods: map[string]string{"size": "func Size(s string) int"},
		Limits: &registry.Limits{Memory: "1KiB"}}))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "blob", "size", json.RawMessage(`{"s":"abc"}`)).OK)
	before := loadArt(t, f, "blob", "size")

	big := json.RawMessage(`{"s":"` + strings.Repeat("x", 3<<10) + `"}`)
	for range 3 {
		o := f.Call(ctx, "blob", "size", big)
		require.False(t, o.OK)
		assert.Equal(t, "caller", o.Err.Class)
		assert.Equal(t, "args_too_large", o.Err.Rule)
		assert.Contains(t, o.Err.Message, "larger than role blob's memory cap of 1KiB (limits.memory)")
		assert.Contains(t, o.Err.Message, "send smaller args")
		assert.Zero(t, o.Meta.ProviderCalls)
	}
	after := loadArt(t, f, "blob", "size")
	assert.Equal(t, before.Recent, after.Recent, "nothing is recorded against the code")
	assert.Equal(t, before.Counters, after.Counters)
	assert.Equal(t, before.Lifecycle, after.Lifecycle)
	assert.Len(t, p.requests(), 1, "no repair was asked for")
	o := f.Call(ctx, "blob", "size", json.RawMessage(`{"s":"abcd"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.JSONEq(t, `4`, string(o.Value))
}

// Issue 22 item 5: one caller sending the same failing input again and again (here from a new
// process each time, with no code generator to repair) moves the code's health once, not three
// times: the code is not degraded and normal calls go on.
func TestRepeatedInputCountsOnce(t *testing.T) {
	store := t.TempDir()
	gen := openForge(t, store, codeAnswers(divCode))
	require.NoError(t, gen.AddRole(divContract()))
	require.True(t, gen.Call(context.Background(), "calc", "div", json.RawMessage(`[8, 2]`)).OK)
	require.NoError(t, gen.Close())

	var rules []string
	for i := range 4 {
		f := openForge(t, store, nil) // a new process, no generator: nothing can repair
		o := f.Call(context.Background(), "calc", "div", json.RawMessage(`{"a": 1, "b": 0}`))
		require.False(t, o.OK)
		rules = append(rules, o.Err.Class+"/"+o.Err.Rule)
		// The same args written otherwise are the same input: spacing, key order, by position,
		// escapes, number spellings.
		spellings := []string{`{"a":1,"b":0}`, `{"b": 0, "a": 1}`, `[1, 0]`, `{"\u0061": 1, "b": 0}`, `[1, -0]`, `{"a": 1, "b": 0, "b": 0}`}
		if i > 0 {
			spellings = spellings[:1] // the recent window (20 calls) keeps the first failure
		}
		for _, same := range spellings {
			o = f.Call(context.Background(), "calc", "div", json.RawMessage(same))
			require.False(t, o.OK, same)
			rules = append(rules, o.Err.Class+"/"+o.Err.Rule+" "+same)
		}
		require.NoError(t, f.Close())
	}
	assert.Equal(t, "intrinsic/panic", rules[0], "the first failure on an input is the code's")
	for _, r := range rules[1:] {
		assert.True(t, strings.HasPrefix(r, "caller/input_repeated"), r)
	}

	f := openForge(t, store, nil)
	o := f.Call(context.Background(), "calc", "div", json.RawMessage(`[9, 3]`))
	require.True(t, o.OK, "normal calls go on: %+v", o.Err)
	assert.JSONEq(t, `3`, string(o.Value))
	a := loadArt(t, f, "calc", "div")
	assert.NotEqual(t, registry.Degraded, a.Lifecycle)
	assert.Equal(t, 1, strings.Count(a.Recent, "i"), "recent %q", a.Recent)
	assert.Equal(t, 1, a.Generation)

	// Distinct failing inputs still count, each once: code that fails on many inputs is degraded.
	for _, b := range []string{`[2, 0]`, `[3, 0]`, `[4, 0]`} {
		require.False(t, f.Call(context.Background(), "calc", "div", json.RawMessage(b)).OK)
	}
	a = loadArt(t, f, "calc", "div")
	assert.Equal(t, 4, strings.Count(a.Recent, "i"), "recent %q", a.Recent)
}

// Issue 22 item 5: when the repair's code, which passes the acceptance set, fails on the args
// too, and the persisted code's other recent calls passed, the failure is the input's: the code
// is not marked degraded, and the same input again spends no provider call.
func TestInputEveryVersionFailsIsTheInputs(t *testing.T) {
	store := t.TempDir()
	p := codeAnswers(divCode)
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(divContract()))
	ctx := context.Background()
	for _, args := range []string{`[8, 2]`, `[9, 3]`, `[10, 5]`} {
		require.True(t, f.Call(ctx, "calc", "div", json.RawMessage(args)).OK)
	}
	asked := len(p.requests())

	o := f.Call(ctx, "calc", "div", json.RawMessage(`[1, 0]`))
	require.False(t, o.OK)
	assert.Equal(t, "caller", o.Err.Class)
	assert.Equal(t, "input_specific", o.Err.Rule)
	assert.Contains(t, o.Err.Message, "fails on these args in every version that passes its acceptance set")
	assert.Contains(t, o.Err.Message, "Change the args")
	assert.Greater(t, len(p.requests()), asked, "the repair was tried")
	a := loadArt(t, f, "calc", "div")
	assert.NotEqual(t, registry.Degraded, a.Lifecycle, "the code is not degraded by one input")
	assert.Equal(t, 1, a.Generation)

	asked = len(p.requests())
	o = f.Call(ctx, "calc", "div", json.RawMessage(`[1, 0]`))
	require.False(t, o.OK)
	assert.Equal(t, "caller/input_repeated", o.Err.Class+"/"+o.Err.Rule)
	assert.Len(t, p.requests(), asked, "the same input again spends no repair")
	o = f.Call(ctx, "calc", "div", json.RawMessage(`[12, 4]`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Zero(t, o.Meta.ProviderCalls)
}

// Issue 22 item 6: the operator's maxima bound every contract: AddRole refuses one over them
// naming the maximum, and one stored before (or under higher maxima) runs clamped.
func TestContractLimitsAreBoundedByMaxima(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, codeAnswers(divCode))
	absurd := divContract()
	absurd.Limits = &registry.Limits{Memory: "1048576MB", Timeout: "24h", Output: "1048576MB"}
	err := f.AddRole(absurd)
	require.ErrorIs(t, err, registry.ErrInvalidContract)
	for _, want := range []string{"limits.memory 1048576MB is over the operator's maximum of 1GiB (FORGE_MAX_MEMORY)",
		"limits.timeout 24h is over the operator's maximum of 1m0s (FORGE_MAX_TIMEOUT)",
		"limits.output 1048576MB is over the operator's maximum of 64MiB (FORGE_MAX_OUTPUT)"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = f.Store().Role("calc")
	require.ErrorIs(t, err, registry.ErrNotFound, "nothing was stored")

	// Stored past the check (an older forge, or higher maxima then): it runs clamped.
	_, err = f.Store().PutRole(absurd, time.Now())
	require.NoError(t, err)
	rt, err := f.roleRuntime("calc")
	require.NoError(t, err)
	assert.Equal(t, int64(registry.DefaultMaxMemory), rt.limits.MemoryBytes)
	assert.Equal(t, registry.DefaultMaxTimeout, rt.limits.Timeout)
	assert.Equal(t, registry.DefaultMaxOutput, rt.limits.OutputBytes)

	low := openForge(t, t.TempDir(), nil, func(o *Options) { o.Maxima = registry.Maxima{Memory: 64 << 20, Timeout: time.Second} })
	c := divContract()
	c.Limits = &registry.Limits{Memory: "128MiB"}
	err = low.AddRole(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "maximum of 64MiB")
	c.Limits = nil // the defaults (256MiB, 2s) are clamped to the lower maxima
	require.NoError(t, low.AddRole(c))
	rt, err = low.roleRuntime("calc")
	require.NoError(t, err)
	assert.Equal(t, int64(64<<20), rt.limits.MemoryBytes)
	assert.Equal(t, time.Second, rt.limits.Timeout)
}

func TestMaximaFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	o, err := OptionsFromEnv(env(map[string]string{"FORGE_MAX_MEMORY": "2GiB", "FORGE_MAX_TIMEOUT": "90s", "FORGE_MAX_OUTPUT": "128MB"}))
	require.NoError(t, err)
	assert.Equal(t, registry.Maxima{Memory: 2 << 30, Timeout: 90 * time.Second, Output: 128 << 20}, o.Maxima)
	o, err = OptionsFromEnv(env(nil))
	require.NoError(t, err)
	assert.Equal(t, registry.Maxima{Memory: 1 << 30, Timeout: time.Minute, Output: 64 << 20}, o.Maxima.WithDefaults())
	for k, v := range map[string]string{"FORGE_MAX_MEMORY": "9999999999G", "FORGE_MAX_OUTPUT": "0", "FORGE_MAX_TIMEOUT": "-1s"} {
		_, err := OptionsFromEnv(env(map[string]string{k: v}))
		require.Error(t, err, k)
		assert.Contains(t, err.Error(), k)
		assert.Contains(t, err.Error(), "the default is")
	}
}
