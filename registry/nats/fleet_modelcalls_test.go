package nats

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFleetModelCallLedger: two handles of one fleet store (two servers) record into one ledger
// per client: concurrent spends are all kept (up to keep, the newest), each client's apart, the
// client "" too.
func TestFleetModelCallLedger(t *testing.T) {
	url := single(t)
	a, b := openFleet(t, url, "mcl"), openFleet(t, url, "mcl")
	got, err := a.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Empty(t, got)
	base := time.Unix(1_700_000_000, 0)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := a
			if i%2 == 1 {
				f = b
			}
			assert.NoError(t, f.SpendModelCall("x", base.Add(time.Duration(i)*time.Second), 10))
		}()
	}
	wg.Wait()
	got, err = b.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Len(t, got, 6, "no concurrent spend lost")
	assert.True(t, slices.IsSortedFunc(got, time.Time.Compare), "oldest first: %v", got)
	for i := 0; i < 4; i++ {
		require.NoError(t, b.SpendModelCall("x", base.Add(time.Minute+time.Duration(i)*time.Second), 3))
	}
	got, err = a.ModelCallsSpent("x")
	require.NoError(t, err)
	require.Len(t, got, 3, "only the last keep")
	assert.Equal(t, base.Add(time.Minute+3*time.Second), got[2])
	require.NoError(t, a.SpendModelCall("", base, 3))
	require.NoError(t, a.SpendModelCall("a b/c.d", base, 3))
	for _, c := range []string{"", "a b/c.d"} {
		got, err = b.ModelCallsSpent(c)
		require.NoError(t, err)
		assert.Equal(t, []time.Time{base}, got, "client %q", c)
	}
}
