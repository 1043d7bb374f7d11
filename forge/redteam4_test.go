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

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// TestRedteam4ConcurrentFirstCallsStayUnderTheModelCallBound: a client under a bound of 2 model
// calls that calls 8 methods no code exists for, all at once, passed the check 8 times (a model
// call is counted when it is answered, and none was yet), so it spent 8: the bound was no bound
// for a client that calls concurrently. A generation now holds one of the client's model calls
// from its check on.
func TestRedteam4ConcurrentFirstCallsStayUnderTheModelCallBound(t *testing.T) {
	const calls, bound = 8, 2
	arrived := make(chan struct{}, calls)
	release := make(chan struct{})
	p := &funcProvider{fn: func(_ int, r provider.Request) (provider.Answer, error) {
		arrived <- struct{}{} // this call asks the model: wait until every call has got this far
		<-release
		return provider.Answer{Code: fmt.Sprintf("package artifact\n\nfunc %s(x int) int { return x }\n", sandbox.ExportedName(r.Method))}, nil
	}}
	f := openForge(t, t.TempDir(), p, func(o *Options) {
		o.ModelCalls = ModelCallLimit{Default: ModelCallBound{N: bound}}
	})
	require.NoError(t, f.AddRole(registry.Contract{Role: "open", Purpose: "any method the caller names"}))
	ctx := WithClient(context.Background(), "a")
	outs := make([]Outcome, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = f.Call(ctx, "open", fmt.Sprintf("m%d", i), json.RawMessage(`{"x":1}`))
			if !outs[i].OK {
				arrived <- struct{}{} // refused without asking the model
			}
		}()
	}
	for range calls {
		<-arrived
	}
	close(release)
	wg.Wait()
	ok, refused := 0, 0
	for _, o := range outs {
		if o.OK {
			ok++
		} else if o.Err.Type == TypeModelCalls {
			refused++
			assert.Contains(t, o.Err.Message, "client a spent or is spending (generations under way) its 2 model calls")
		}
	}
	assert.Equal(t, bound, len(p.requests()), "the model calls the client spent")
	assert.Equal(t, bound, ok)
	assert.Equal(t, calls-bound, refused)
	// The held calls were spent: the next new method is refused, without asking the model.
	o := f.Call(ctx, "open", "late", json.RawMessage(`{"x":1}`))
	require.False(t, o.OK)
	assert.Equal(t, TypeModelCalls, o.Err.Type)
	assert.Equal(t, bound, len(p.requests()))
}

// TestRedteam4ModelCallsLeftCountsHeldCalls: the calls held for generations under way count as
// spent now.
func TestRedteam4ModelCallsLeftCountsHeldCalls(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(20 * time.Minute)
	spent := []time.Time{t0, t0.Add(10 * time.Minute)}
	for _, tc := range []struct {
		name    string
		spent   []time.Time
		n, held int
		ok      bool
		retryAt time.Time
	}{
		{"held under the bound", nil, 2, 1, true, time.Time{}},
		{"held up to the bound", nil, 2, 2, false, now.Add(time.Hour)},
		{"spent and held up to the bound: the oldest spend leaves first", spent[:1], 2, 1, false, t0.Add(time.Hour)},
		{"spent and held over the bound", spent, 2, 1, false, t0.Add(70 * time.Minute)},
		{"spent over the bound and held", spent, 1, 1, false, now.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, retryAt := modelCallsLeft(tc.spent, now, tc.n, tc.held, time.Hour)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.retryAt, retryAt)
		})
	}
}

// TestRedteam4HeldModelCallIsReleased: a call whose check held a model call and that asked none
// (it joined another's generation, or the code was there) gives it back.
func TestRedteam4HeldModelCallIsReleased(t *testing.T) {
	m := newModelCalls(ModelCallLimit{Default: ModelCallBound{N: 1}}, nil)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	fl, held := m.allow("a", now)
	require.Nil(t, fl)
	require.True(t, held)
	fl, _ = m.allow("a", now)
	require.NotNil(t, fl, "the held call counts")
	m.unhold("a")
	fl, held = m.allow("a", now)
	require.Nil(t, fl, "released")
	m.spend("a", now, held)
	fl, _ = m.allow("a", now)
	require.NotNil(t, fl, "spent once")
	assert.Empty(t, m.held, "no hold left behind")
}
