package forge

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// warmOf returns the warm-path state of role.method's live program (nil if none).
func warmOf(t *testing.T, f *Forge, role, method string) (*warmState, *registry.Artifact) {
	t.Helper()
	art, ok := f.store.Lookup(role, method)
	require.True(t, ok, "the artifact is cached")
	p := f.programs.get(registry.Key{Role: role, Method: method}, art.CodeChecksum)
	require.NotNil(t, p, "the program is live")
	defer p.release()
	return p.warm.Load(), art
}

// A warm call reuses the decision made for the store's current snapshot; a new snapshot (here a
// metrics flush, which merges the counters) is decided again, once, and its event fields follow.
func TestWarmPathReusesItsDecisionPerSnapshot(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	f := openForge(t, t.TempDir(), cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}), func(o *Options) {
		o.FlushInterval = time.Hour
		o.EventSink = func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	})
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	args := json.RawMessage(`{"s":"a"}`)
	require.True(t, f.Call(ctx, "text", "upper", args).OK) // generated
	o := f.Call(ctx, "text", "upper", args)
	require.True(t, o.OK, "%+v", o.Err)
	w, art := warmOf(t, f, "text", "upper")
	require.NotNil(t, w, "a persisted call leaves its decision on the live program")
	assert.Same(t, art, w.art)
	assert.Equal(t, o.Meta.Decision, w.decision)

	for range 3 {
		o2 := f.Call(ctx, "text", "upper", args)
		require.True(t, o2.OK)
		assert.Equal(t, o.Meta.Decision, o2.Meta.Decision)
	}
	w2, _ := warmOf(t, f, "text", "upper")
	assert.Same(t, w, w2, "same snapshot, same runtime: the decision is reused")

	f.rec.Flush() // the flushed counters make a new snapshot
	o3 := f.Call(ctx, "text", "upper", args)
	require.True(t, o3.OK)
	w3, art3 := warmOf(t, f, "text", "upper")
	assert.NotSame(t, w, w3, "a new snapshot is decided again")
	assert.Same(t, art3, w3.art)
	assert.Equal(t, art3.SuccessCount, w3.ev.success)
	mu.Lock()
	last := events[len(events)-1]
	mu.Unlock()
	assert.Equal(t, art3.SuccessCount, last.SuccessCount, "the event carries the new snapshot's counters")
	assert.Positive(t, last.SuccessCount)

	rep := f.rec.Flush()
	assert.Equal(t, int64(1), rep.Merged[registry.Key{Role: "text", Method: "upper"}], "the warm call was recorded through its handle")
}
