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
	p := f.programs.get(keyOf(role, method, ""), art.CodeChecksum)
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
	require.NotNil(t, f.pins, "the directory store offers pins")
	pinned, ok := f.pins.Relookup(w.pin)
	require.True(t, ok, "the warm state pins the store's snapshot it was decided for")
	assert.Same(t, art, pinned)

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
	_, ok = f.pins.Relookup(w.pin)
	assert.False(t, ok, "the flush replaced the pinned snapshot")
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

// The pinned warm path sees what Lookup sees: another process's change, found by the store's
// inline check (a revalidation interval under the sweep's floor), ends the warm hits at once.
func TestPinnedWarmPathSeesOtherProcessWrites(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store, cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}), func(o *Options) {
		o.FlushInterval = time.Hour
	})
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	args := json.RawMessage(`{"s":"a"}`)
	require.True(t, f.Call(ctx, "text", "upper", args).OK) // generated
	require.True(t, f.Call(ctx, "text", "upper", args).OK) // decided, pinned
	w, _ := warmOf(t, f, "text", "upper")
	require.NotNil(t, w)
	require.NotEqual(t, registry.Pin{}, w.pin)
	require.True(t, f.Call(ctx, "text", "upper", args).OK) // a warm hit

	operator, err := registry.Open(store) // another process
	require.NoError(t, err)
	defer operator.Close()
	_, err = operator.Update("text", "upper", func(a *registry.Artifact, _ bool) error { a.Lifecycle = registry.Quarantined; return nil })
	require.NoError(t, err)
	f.store.SetRevalidate(time.Nanosecond) // the next lookup checks the file
	o := f.Call(ctx, "text", "upper", args)
	assert.False(t, o.OK, "the quarantined artifact is refused, not run from the pinned snapshot")
	assert.Contains(t, o.Meta.Decision, "refuse")
	_, ok := f.pins.Relookup(w.pin)
	assert.False(t, ok, "the pin's snapshot left the cache")
}
