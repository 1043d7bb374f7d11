package atomicmax

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestRaise(t *testing.T) {
	var v atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				Raise(&v, int64(w*1000+i))
			}
		}()
	}
	wg.Wait()
	if got := v.Load(); got != 7999 {
		t.Fatalf("got %d, want 7999", got)
	}
	Raise(&v, 5)
	if got := v.Load(); got != 7999 {
		t.Fatalf("a smaller value lowered it: %d", got)
	}
}
