package registry

import (
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirectoryModelCallLedger: two handles of one directory store (two processes) record into
// one ledger per client: concurrent spends are all kept, in time order, the last keep of them;
// a damaged file is said when read and started over by the next spend.
func TestDirectoryModelCallLedger(t *testing.T) {
	root := t.TempDir()
	a, err := Open(root)
	require.NoError(t, err)
	b, err := Open(root)
	require.NoError(t, err)
	got, err := a.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Empty(t, got)
	base := time.Unix(1_700_000_000, 0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			assert.NoError(t, s.SpendModelCall("x", base.Add(time.Duration(7-i)*time.Second), 100))
		}()
	}
	wg.Wait()
	got, err = b.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Len(t, got, 8, "no concurrent spend lost")
	assert.True(t, slices.IsSortedFunc(got, time.Time.Compare), "oldest first: %v", got)
	require.NoError(t, a.SpendModelCall("x", base.Add(time.Minute), 3))
	got, err = b.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Equal(t, []time.Time{base.Add(6 * time.Second), base.Add(7 * time.Second), base.Add(time.Minute)}, got)
	for _, c := range []string{"", "../../etc/passwd"} {
		require.NoError(t, a.SpendModelCall(c, base, 3))
		got, err = b.ModelCallsSpent(c)
		require.NoError(t, err)
		assert.Equal(t, []time.Time{base}, got, "client %q", c)
	}

	require.NoError(t, os.WriteFile(a.modelCallsPath("x"), []byte("[1,"), 0o644))
	_, err = b.ModelCallsSpent("x")
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, b.SpendModelCall("x", base, 3))
	got, err = a.ModelCallsSpent("x")
	require.NoError(t, err)
	assert.Equal(t, []time.Time{base}, got)
}
