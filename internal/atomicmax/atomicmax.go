// Package atomicmax raises an atomic integer to a value, for counters that keep a maximum
// (or, stored as MaxInt64 - v, a minimum) without a lock.
package atomicmax

import "sync/atomic"

// Raise raises v to x if x is larger.
func Raise(v *atomic.Int64, x int64) {
	for {
		cur := v.Load()
		if x <= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}
