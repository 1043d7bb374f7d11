package forge

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// stallProvider answers when its context ends (or, unbounded, after a minute: a failure).
type stallProvider struct{}

func (stallProvider) Name() string { return "stall" }
func (stallProvider) Generate(ctx context.Context, _ provider.Request) (provider.Answer, error) {
	select {
	case <-ctx.Done():
		return provider.Answer{}, ctx.Err()
	case <-time.After(time.Minute):
		return provider.Answer{}, errors.New("the generation was not bounded by CallWithin")
	}
}

// CallWithin bounds what is not a warm run: a generation ends at the bound.
func TestCallWithinBoundsGeneration(t *testing.T) {
	f := openForge(t, t.TempDir(), stallProvider{})
	require.NoError(t, f.AddRole(textContract()))
	o := f.CallWithin(context.Background(), 50*time.Millisecond, "text", "upper", json.RawMessage(`{"s":"go"}`))
	require.False(t, o.OK)
	assert.NotContains(t, o.Err.Message, "not bounded")
}

const spinForeverCode = "package artifact\n\nfunc Spin(n int) int {\n\tfor n > 0 {\n\t\tn++\n\t}\n\treturn n\n}\n"

// A warm run whose role's own limit ends after the bound runs under the bound: a runaway call
// ends at it, the caller's deadline, not the code's failure.
func TestCallWithinBoundsWarmRunPastRoleLimit(t *testing.T) {
	p := cassette(t, line{Role: "loop", Method: "spin", Kind: "generate", Attempt: 1, Code: spinForeverCode})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(registry.Contract{Role: "loop", Purpose: "spins", Methods: map[string]string{"spin": "func Spin(n int) int"},
		Limits: &registry.Limits{Timeout: "50s"}}))
	ctx := context.Background()
	o := f.Call(ctx, "loop", "spin", json.RawMessage(`{"n":0}`))
	require.True(t, o.OK, "%+v", o.Err)
	o = f.CallWithin(ctx, 100*time.Millisecond, "loop", "spin", json.RawMessage(`{"n":1}`))
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, "caller's deadline", "%+v", o.Err)
	assert.NotEqual(t, "intrinsic", o.Err.Class)
}

// A warm call whose role's limit ends first makes no context or timer of the bound's: it costs
// what Call costs.
func TestCallWithinWarmMakesNoTimer(t *testing.T) {
	f := warmForge(t)
	ctx := context.Background()
	args := json.RawMessage(`{"s":"hello"}`)
	call := testing.AllocsPerRun(200, func() { f.Call(ctx, "text", "upper", args) })
	within := testing.AllocsPerRun(200, func() { f.CallWithin(ctx, time.Hour, "text", "upper", args) })
	assert.LessOrEqual(t, within, call, "CallWithin's warm call allocates more than Call's (%v > %v)", within, call)
}
