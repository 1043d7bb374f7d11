package yaegi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// A program reports the interpreters it holds: one after Compile, more with generic sources,
// none once closed; an isolated one holds none in this process.
func TestLiveBytes(t *testing.T) {
	ctx := context.Background()
	sb := New(Options{})
	t.Cleanup(func() { sb.Close() })
	plain, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", Func: "Add"})
	require.NoError(t, err)
	generic, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nimport \"slices\"\n\nfunc Has(xs []int, x int) bool { return slices.Contains(xs, x) }\n", Func: "Has"})
	require.NoError(t, err)
	p, g := plain.(sandbox.Sizer).LiveBytes(), generic.(sandbox.Sizer).LiveBytes()
	assert.GreaterOrEqual(t, p, int64(interpreterBytes))
	assert.Less(t, p, int64(2*interpreterBytes), "one interpreter after Compile")
	assert.Greater(t, g, p+int64(genericBytes)/2, "generic sources cost more")
	require.NoError(t, plain.Close())
	assert.Less(t, plain.(sandbox.Sizer).LiveBytes(), int64(interpreterBytes), "a closed program holds no interpreter")

	iso, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", Func: "Add",
		Limits: sandbox.Limits{Isolation: sandbox.IsolationProcess}})
	if err != nil {
		t.Skipf("no worker here: %v", err)
	}
	assert.Zero(t, iso.(sandbox.Sizer).LiveBytes())
	require.NoError(t, iso.Close())
}
