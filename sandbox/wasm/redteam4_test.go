package wasm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestRedteam4NoPoolAfterClose: a call that passed Run's check of a closed program just before
// another goroutine closed it reached pool after Close had emptied the program's pools: it made a
// new pool (an instance of the compiled module, counted in the program's bytes) that nothing
// would ever close, and published it for the lock-free warm path of a closed program.
func TestRedteam4NoPoolAfterClose(t *testing.T) {
	p, err := shared.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Redteam4(a int) int { return a + 4 }\n"})
	require.NoError(t, err)
	out, err := shared.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[1]`)})
	require.NoError(t, err)
	require.JSONEq(t, "5", string(out.Value))
	prog := p.(*Program)
	require.NoError(t, p.Close())
	require.True(t, prog.closed.Load())
	// Where the racing call is once Close is done: past the check, at pool.
	_, err = prog.pool(context.Background(), pagesFor(sandbox.DefaultMemoryBytes))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "closed")
	prog.mu.Lock()
	defer prog.mu.Unlock()
	assert.Empty(t, prog.pools, "a pool of a closed program")
	assert.Nil(t, prog.ready.Load(), "a closed program's pools published to the warm path")
}
