package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestInlinedRecursionKeepsAnswersAndLines: under guestGcflags the artifact's recursive function
// is inlined into itself one level and into its caller; answers and the line a panic reports are
// those of the source as written.
func TestInlinedRecursionKeepsAnswersAndLines(t *testing.T) {
	p := compile(t, `package artifact

func walk(n, depth int) int {
	if n == depth {
		panic("bottom")
	}
	if n < 2 {
		return n
	}
	return walk(n-1, depth) + walk(n-2, depth)
}

func Walk(n, panicAt int) int { return walk(n, panicAt) }
`)
	ctx := context.Background()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[20, -1]`)})
	require.NoError(t, err)
	assert.Equal(t, "6765", string(out.Value))
	for _, at := range []string{"0", "1", "7"} { // the panic at each level of the unrolled recursion
		_, err = shared.Run(ctx, p, sandbox.Input{Args: []byte(`[20, ` + at + `]`)})
		require.Error(t, err)
		se := sandbox.AsError(err)
		assert.Equal(t, sandbox.KindPanic, se.Kind, se.Error())
		assert.Equal(t, 5, se.Line, se.Error())
	}
}
