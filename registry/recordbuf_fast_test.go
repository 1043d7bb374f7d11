package registry

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Once the window is full of a generation's successes, another success of it takes no lock: it
// is recorded while the artifact's entry is locked (a flush taking it, another outcome being
// recorded), and it counts the same as one recorded under the lock.
func TestWarmSuccessTakesNoLock(t *testing.T) {
	b := NewRecordBuffer()
	h := b.Handle("r", "m")
	for i := range RecentWindow {
		h.RecordGen(3, Success, time.Duration(i+1)*time.Millisecond, "")
	}
	h.p.mu.Lock()
	done := make(chan struct{})
	go func() { h.RecordGen(3, Success, time.Second, ""); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a warm success waited for the entry's lock")
	}
	h.p.mu.Unlock()
	h.RecordGen(3, IntrinsicFailure, time.Millisecond, "boom")
	d := b.Take()[Key{"r", "m"}]
	assert.Equal(t, int64(RecentWindow+2), d.Calls)
	assert.Equal(t, int64(RecentWindow+1), d.Counters.SuccessCount)
	assert.Equal(t, int64(1), d.Counters.FailureCount)
	assert.Equal(t, int64(time.Second), d.Counters.MaxDurationNanos)
	assert.Equal(t, int64(RecentWindow*(RecentWindow+1)/2)*int64(time.Millisecond)+int64(time.Second)+int64(time.Millisecond), d.Counters.TotalDurationNanos)
	assert.Equal(t, strings.Repeat("s", RecentWindow-1)+"i", d.Counters.Recent)
	assert.Equal(t, 3, d.Gen)
	assert.Equal(t, int64(RecentWindow+2), d.GenCalls)
	assert.Equal(t, int64(1), d.GenFailures)
	assert.Equal(t, "intrinsic", d.LastClass)
}

// Successes without the lock, failures and flushes at once lose no count.
func TestConcurrentRecordsAndTakesCountEveryCall(t *testing.T) {
	b := NewRecordBuffer()
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	var taken []BufferedDelta
	var mu sync.Mutex
	stop, taker := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(taker)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, d := range b.Take() {
				mu.Lock()
				taken = append(taken, d)
				mu.Unlock()
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := b.Handle("r", "m")
			for i := range each {
				o := Success
				if i%500 == 499 {
					o = CallerFailure
				}
				h.RecordGen(1, o, time.Duration(w*each+i+1), "")
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-taker // what its last Take took is counted too (it lost 150 calls of 16,000 once)
	mu.Lock()
	defer mu.Unlock()
	for _, d := range b.Take() {
		taken = append(taken, d)
	}
	var calls, ok, fails, sum, mx int64
	for _, d := range taken {
		calls += d.Calls
		ok += d.Counters.SuccessCount
		fails += d.Counters.FailureCount
		sum += d.Counters.TotalDurationNanos
		mx = max(mx, d.Counters.MaxDurationNanos)
	}
	const n = workers * each
	require.Equal(t, int64(n), calls)
	assert.Equal(t, int64(n-workers*each/500), ok)
	assert.Equal(t, int64(workers*each/500), fails)
	assert.Equal(t, int64(n*(n+1)/2), sum)
	assert.Equal(t, int64(n), mx)
}
