package forge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An observer (the server's metrics) keeps receiving calls after a subscriber (an event stream)
// comes and goes.
func TestObserverOutlivesSubscription(t *testing.T) {
	f := warmForge(t)
	var seen int
	f.Observe(func(e *LiveEvent) {
		if e.Call != nil {
			seen++
		}
	})
	ctx := context.Background()
	args := json.RawMessage(`{"s":"hello"}`)
	require.True(t, f.Call(ctx, "text", "upper", args).OK)
	require.Equal(t, 1, seen)
	sub := f.Subscribe(Filter{})
	require.True(t, f.Call(ctx, "text", "upper", args).OK)
	e := <-sub.C
	sub.Close()
	require.True(t, f.Call(ctx, "text", "upper", args).OK)
	assert.Equal(t, 3, seen, "the observer missed calls after the subscription closed")
	assert.Equal(t, "upper", e.Call.Method, "a subscriber's event is its own")
}

// With observers alone (the server's metrics) a call's live event allocates nothing.
func TestObservedCallEventAllocatesNothing(t *testing.T) {
	h := newLiveHub()
	var last string
	h.observers = append(h.observers, func(e *LiveEvent) { last = e.Call.Method })
	h.n.Store(1)
	f := &Forge{live: h}
	e := Event{Role: "text", Method: "upper", OK: true, ProgramSource: SourcePersisted}
	allocs := testing.AllocsPerRun(100, func() { f.publishCall(h, e) })
	assert.Equal(t, "upper", last)
	assert.Zero(t, allocs, "an observed call's live event allocates")
	// A subscriber to changes only (MCP's tool list) takes no call: still nothing allocated.
	changes := f.Subscribe(Filter{ChangesOnly: true})
	defer changes.Close()
	allocs = testing.AllocsPerRun(100, func() { f.publishCall(h, e) })
	assert.Zero(t, allocs, "a call's live event allocates with a subscriber that takes no calls")
	assert.Empty(t, changes.C)
}
