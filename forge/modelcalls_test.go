package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

func TestModelCallsLeft(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(mins ...int) []time.Time {
		var s []time.Time
		for _, m := range mins {
			s = append(s, t0.Add(time.Duration(m)*time.Minute))
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		spent   []time.Time
		now     time.Time
		n       int
		ok      bool
		kept    int
		retryAt time.Time
	}{
		{"nothing spent", nil, t0, 2, true, 0, time.Time{}},
		{"under the bound", at(0), t0.Add(time.Minute), 2, true, 1, time.Time{}},
		{"at the bound", at(0, 10), t0.Add(20 * time.Minute), 2, false, 2, t0.Add(time.Hour)},
		{"the oldest left the window", at(0, 10), t0.Add(time.Hour), 2, true, 1, time.Time{}},
		{"all left the window", at(0, 10), t0.Add(2 * time.Hour), 2, true, 0, time.Time{}},
		{"over the bound (a generation's overdraft): wait for the n-th newest", at(0, 5, 10), t0.Add(20 * time.Minute), 2, false, 3, t0.Add(65 * time.Minute)},
		{"no bound", at(0, 1, 2), t0.Add(3 * time.Minute), 0, true, 3, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, ok, retryAt := modelCallsLeft(tc.spent, tc.now, tc.n, 0, time.Hour)
			assert.Equal(t, tc.ok, ok)
			assert.Len(t, in, tc.kept)
			assert.Equal(t, tc.retryAt, retryAt)
		})
	}
}

// identityProvider writes `func Name(x int) int { return x }` for any method.
func identityProvider() *funcProvider {
	return &funcProvider{fn: func(_ int, r provider.Request) (provider.Answer, error) {
		name := sandbox.ExportedName(r.Method)
		return provider.Answer{Code: fmt.Sprintf("package artifact\n\nfunc %s(x int) int { return x }\n", name)}, nil
	}}
}

func TestModelCallsBoundEachClient(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := identityProvider()
	var evMu sync.Mutex
	var refused []Event
	f := openForge(t, t.TempDir(), p, func(o *Options) {
		o.EventSink = func(e Event) {
			if e.FailureType == TypeModelCalls {
				evMu.Lock()
				refused = append(refused, e)
				evMu.Unlock()
			}
		}
		o.Now = clock
		o.ModelCalls = ModelCallLimit{Default: ModelCallBound{N: 2}, Clients: map[string]ModelCallBound{"ops-bot": {}}}
	})
	require.NoError(t, f.AddRole(registry.Contract{Role: "open", Purpose: "any method the caller names"}))
	a := WithClient(context.Background(), "a")
	b := WithClient(context.Background(), "b")
	args := json.RawMessage(`{"x":3}`)

	for _, m := range []string{"m1", "m2"} {
		o := f.Call(a, "open", m, args)
		require.True(t, o.OK, "%s: %+v", m, o.Err)
	}
	o := f.Call(a, "open", "m3", args)
	require.False(t, o.OK)
	assert.Equal(t, TypeModelCalls, o.Err.Type)
	assert.Equal(t, string(classifier.Caller), o.Err.Class)
	assert.Equal(t, string(classifier.RuleModelCalls), o.Err.Rule)
	assert.Equal(t, time.Hour, o.Err.RetryAfter)
	assert.Contains(t, o.Err.Message, "client a spent its 2 model calls")
	assert.Contains(t, o.Err.Message, "--model-calls")
	assert.Len(t, p.requests(), 2, "the refused call asked no model")
	_, err := f.Store().Load("open", "m3")
	assert.Error(t, err, "nothing was written for the refused call")
	evMu.Lock()
	require.Len(t, refused, 1)
	e := refused[0]
	evMu.Unlock()
	assert.Equal(t, "a", e.Client)
	assert.True(t, e.callerNoise(), "a spent client's refusals are aggregated, not a line each")
	_, label := LabelsOf(&e)
	assert.Equal(t, UnknownLabel, label, "a name only the caller gave never becomes a metric label")

	// Code that exists still answers the client; another client has its own bound; a client
	// named in Clients with 0 has none.
	require.True(t, f.Call(a, "open", "m1", args).OK)
	require.True(t, f.Call(b, "open", "m3", args).OK)
	bot := WithClient(context.Background(), "ops-bot")
	for i := range 4 {
		o := f.Call(bot, "open", fmt.Sprintf("bot%d", i), args)
		require.True(t, o.OK, "%+v", o.Err)
	}
	// The operator's regeneration is not the client's spend.
	require.True(t, f.Regenerate(a, "open", "m1").OK)
	assert.False(t, f.Call(a, "open", "m4", args).OK)

	// The window moves on: half an hour later still refused, past the hour allowed again.
	mu.Lock()
	now = now.Add(30 * time.Minute)
	mu.Unlock()
	o = f.Call(a, "open", "m4", args)
	require.False(t, o.OK)
	assert.Equal(t, 30*time.Minute, o.Err.RetryAfter)
	mu.Lock()
	now = now.Add(31 * time.Minute)
	mu.Unlock()
	o = f.Call(a, "open", "m4", args)
	require.True(t, o.OK, "%+v", o.Err)

	// A refusal is the caller's: it never moves the artifact's health.
	art, err := f.Store().Load("open", "m1")
	require.NoError(t, err)
	assert.Zero(t, art.FailureCount)
}

func TestModelCallsLedgerStaysBounded(t *testing.T) {
	m := newModelCalls(ModelCallLimit{Default: ModelCallBound{N: 1}}, nil)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i := range maxTrackedClients + 10 {
		m.spend(fmt.Sprintf("c%d", i), t0, false)
	}
	assert.LessOrEqual(t, len(m.spent), maxTrackedClients)
	// An hour on, the old spends are dropped to make room instead of starting over.
	m.spend("late", t0.Add(2*time.Hour), false)
	assert.LessOrEqual(t, len(m.spent), maxTrackedClients)
	fl, _ := m.allow("late", t0.Add(2*time.Hour+time.Second))
	assert.NotNil(t, fl, "the newest spend is kept")
	fl, _ = m.allow("c1", t0.Add(2*time.Hour))
	assert.Nil(t, fl, "an hour-old spend no longer counts")
}
