package forge

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	natsstore "github.com/artifactforge/forge/registry/nats"
)

// TestFleetServerDown: a forge on the fleet store whose NATS server stops keeps answering warm
// calls from memory, while a cold call, AddRole and Stale fail at once (not after the store's
// 15 s operation timeout) with an error that says the server is unreachable. The bound below only
// turns a hang into a failure.
func TestFleetServerDown(t *testing.T) {
	const hangBound = 5 * time.Second
	url, stop, err := embedded.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stop)
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, url+"/down", p, func(o *Options) { o.LocalDir = t.TempDir() })
	require.NoError(t, f.AddRole(textContract()))
	loud := registry.Contract{Role: "loud", Purpose: "shouting", Methods: map[string]string{"shout": "func Shout(s string) string"}}
	require.NoError(t, f.AddRole(loud))
	ctx := context.Background()
	o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"warm"}`))
	require.True(t, o.OK, "%+v", o.Err)

	start := time.Now()
	stop()
	stopped := time.Now()
	t.Logf("server stopped in %v", time.Since(start))

	start = time.Now()
	o = f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"hello"}`))
	require.True(t, o.OK, "a warm call runs from memory: %+v", o.Err)
	assert.JSONEq(t, `"HELLO"`, string(o.Value))
	t.Logf("a warm call with the server down: %v", time.Since(start))
	assert.Less(t, time.Since(start), hangBound)

	start = time.Now()
	o = f.Call(ctx, "loud", "shout", json.RawMessage(`{"s":"hello"}`))
	took := time.Since(start)
	require.False(t, o.OK)
	t.Logf("a cold call with the server down: %s: %s after %v (%v after the stop)", o.Err.Type, o.Err.Message, took, time.Since(stopped))
	assert.Less(t, took, hangBound)
	assert.Contains(t, o.Err.Message, "unreachable")
	assert.Contains(t, o.Err.Message, url)
	assert.Equal(t, int64(1), p.n.Load(), "no generation without the store")

	start = time.Now()
	err = f.AddRole(loud)
	t.Logf("AddRole with the server down: %v after %v", err, time.Since(start))
	assert.Less(t, time.Since(start), hangBound)
	assert.True(t, errors.Is(err, natsstore.ErrUnreachable), "%v", err)

	start = time.Now()
	_, err = Stale(f.Store())
	t.Logf("Stale with the server down: %v after %v", err, time.Since(start))
	assert.Less(t, time.Since(start), hangBound)
	assert.True(t, errors.Is(err, natsstore.ErrUnreachable), "%v", err)
}
