package forge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// memLedger is a store's model-call ledger in memory (registry.ModelCallLedger), shared by the
// forges of a test as a fleet store's is by its servers; down makes it unreachable.
type memLedger struct {
	mu    sync.Mutex
	spent map[string][]time.Time
	down  bool
}

func (l *memLedger) ModelCallsSpent(client string) ([]time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return nil, errors.New("unreachable")
	}
	return append([]time.Time(nil), l.spent[client]...), nil
}

func (l *memLedger) SpendModelCall(client string, now time.Time, keep int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return errors.New("unreachable")
	}
	if l.spent == nil {
		l.spent = map[string][]time.Time{}
	}
	s := append(l.spent[client], now)
	l.spent[client] = s[max(0, len(s)-keep):]
	return nil
}

// ledgerStore is a store backend that keeps a model-call ledger.
type ledgerStore struct {
	registry.Backend
	*memLedger
}

// TestModelCallBoundIsTheFleets: two forges on one store whose backend keeps a model-call ledger
// share each client's bound (they allowed it once each: a fleet of N servers, N times the bound).
// When the ledger cannot be read, each counts what it spent itself.
func TestModelCallBoundIsTheFleets(t *testing.T) {
	dir := t.TempDir()
	ledger := &memLedger{}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	server := func() *Forge {
		s, err := registry.Open(dir)
		require.NoError(t, err)
		f, err := open(ledgerStore{s, ledger}, Options{Store: dir, Provider: identityProvider(), DefaultSandbox: "yaegi",
			Now: func() time.Time { return now }, ModelCalls: ModelCallLimit{Default: ModelCallBound{N: 2}}})
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := server(), server()
	require.NoError(t, a.AddRole(registry.Contract{Role: "open", Purpose: "any method the caller names"}))
	ctx := WithClient(context.Background(), "c")
	args := json.RawMessage(`{"x":3}`)
	require.True(t, a.Call(ctx, "open", "m1", args).OK)
	require.True(t, b.Call(ctx, "open", "m2", args).OK)
	for _, f := range []*Forge{a, b} {
		o := f.Call(ctx, "open", "m3", args)
		require.False(t, o.OK, "the fleet spent the client's 2 model calls")
		assert.Equal(t, TypeModelCalls, o.Err.Type)
	}
	assert.Len(t, ledger.spent["c"], 2)

	ledger.mu.Lock()
	ledger.down = true
	ledger.mu.Unlock()
	o := a.Call(ctx, "open", "m3", args)
	require.True(t, o.OK, "unreachable: a counts its own one spend: %+v", o.Err)
	o = a.Call(ctx, "open", "m4", args)
	require.False(t, o.OK, "and its own bound still holds")
}

// TestModelCallBoundIsSharedOnADirectoryStore: two forges on one directory (a server and a
// `forge mcp`, or several) share each client's bound through the store's ledger.
func TestModelCallBoundIsSharedOnADirectoryStore(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	opts := func(o *Options) {
		o.Now = func() time.Time { return now }
		o.ModelCalls = ModelCallLimit{Default: ModelCallBound{N: 2}}
	}
	a, b := openForge(t, dir, identityProvider(), opts), openForge(t, dir, identityProvider(), opts)
	require.NoError(t, a.AddRole(registry.Contract{Role: "open", Purpose: "any method the caller names"}))
	ctx := WithClient(context.Background(), "c")
	args := json.RawMessage(`{"x":3}`)
	require.True(t, a.Call(ctx, "open", "m1", args).OK)
	require.True(t, b.Call(ctx, "open", "m2", args).OK)
	for _, f := range []*Forge{a, b} {
		o := f.Call(ctx, "open", "m3", args)
		require.False(t, o.OK, "the two spent the client's 2 model calls")
		assert.Equal(t, TypeModelCalls, o.Err.Type)
	}
}
