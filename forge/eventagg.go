package forge

import (
	"maps"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/internal/atomicmax"
)

// Aggregates of warm successes (see Event, kind "aggregate"). The warm path finds its artifact's
// bucket in a read-only map published through an atomic pointer (no lock, no write to memory
// that other calls share but the bucket's own), then updates the bucket with atomics under a
// shared read lock (aggBucket): counts, sums, the slowest call and one histogram counter. New buckets wait in a locked dirty map until
// the writer's next collect publishes them; idle ones are released after aggIdleIntervals.

// histBuckets covers 0 to 2^40 ns (~18 min) at 8 buckets per power of two; see Event.DurationHist.
const histBuckets = 304

// histIndex is the histogram bucket of a duration in ns.
func histIndex(ns int64) int {
	if ns < 16 {
		return int(max(ns, 0))
	}
	if ns >= 1<<40 {
		return histBuckets - 1
	}
	shift := bits.Len64(uint64(ns)) - 4
	return shift*8 + int(ns>>shift)
}

// histBounds is bucket i's range [lo, hi).
func histBounds(i int) (lo, hi int64) {
	if i < 16 {
		return int64(i), int64(i) + 1
	}
	shift := i/8 - 1
	m := int64(8 + i%8)
	return m << shift, (m + 1) << shift
}

// histValue is the value a bucket stands for: its midpoint, within [lo, hi) and within the
// observed [min, max]. Its error is at most half the bucket's width: 1/16 (6.25%) of the value.
func histValue(i int, minV, maxV int64) int64 {
	lo, hi := histBounds(i)
	v := lo + (hi-lo)/2
	if i < 16 {
		v = lo
	}
	return min(max(v, minV), maxV)
}

type aggKey struct {
	role, method, reason, client string
	gen                          int
	fail                         string // a caller error's type/rule (callerNoise); "" for warm successes
}

// aggKeyOf is the bucket of a line an aggregate may stand for: its artifact generation and
// reason, or for a caller's error its type and rule, under the role and method labels that exist
// (LabelsOf: every made-up name shares one bucket, so that no caller can make buckets or lines
// without bound).
func aggKeyOf(e *Event) aggKey {
	k := aggKey{role: e.Role, method: e.Method, reason: e.Reason, client: e.Client, gen: e.ArtifactGen}
	if !e.OK {
		k.role, k.method = LabelsOf(e)
		k.fail = e.FailureType + "/" + e.FailureRule
	}
	return k
}

// aggBucket is an artifact's interval of warm successes. Every warm call of the artifact adds to
// it, so adding takes no exclusive lock: adders share mu (a read lock: an atomic add, no waiting
// but while a collect takes the interval) and count with atomics; only a call that is the
// interval's slowest so far (its first, and rarely after) takes slowMu. A mutex held by every
// call made convoys under load whenever the kernel preempted its holder.
type aggBucket struct {
	key  aggKey       // set once, before the bucket is shared
	mu   sync.RWMutex // adders: read; collect: write, to mark the bucket dead
	dead bool         // released or closed: the adder must find another bucket
	idle int          // intervals with no call (the writer's)
	age  int          // intervals since the calls it holds began (the writer's)

	n, sum, sandbox atomic.Int64
	last            atomic.Int64 // the latest call's time, Unix ns (0: none or the zero time)
	minInv          atomic.Int64 // math.MaxInt64 - the shortest duration (0: none yet)
	max1            atomic.Int64 // the longest duration + 1 (0: none yet)
	hist            [histBuckets]atomic.Uint32

	slowMu  sync.Mutex
	hasSlow bool
	first   time.Time // the interval's first call
	slow    Event     // the slowest call so far in this interval (ids; artifact fields)
	slowD   int64
}

type aggregator struct {
	read   atomic.Pointer[map[aggKey]*aggBucket]
	mu     sync.Mutex
	dirty  map[aggKey]*aggBucket
	misses int // lookups that missed the read map since it was last published
	closed bool
}

// add folds e into its bucket and returns the bucket; nil once the aggregator is closed.
func (a *aggregator) add(e *Event) *aggBucket {
	k := aggKeyOf(e)
	for {
		var b *aggBucket
		if m := a.read.Load(); m != nil {
			b = (*m)[k]
		}
		if b == nil {
			if b = a.bucket(k); b == nil {
				return nil
			}
		}
		b.mu.RLock()
		if b.dead {
			b.mu.RUnlock()
			continue // released after the map we read was replaced: the current one lacks it
		}
		b.record(e)
		b.mu.RUnlock()
		return b
	}
}

// addVia is add for the warm path: slot caches the bucket of the caller's artifact (see
// warmState), so that a call whose bucket is cached and alive touches that bucket only, not the
// map. A released bucket, or one of another key (a new generation or reason), is looked up again.
func (a *aggregator) addVia(e *Event, slot *atomic.Pointer[aggBucket]) bool {
	if b := slot.Load(); b != nil && b.key.gen == e.ArtifactGen && b.key.reason == e.Reason && b.key.method == e.Method && b.key.role == e.Role && b.key.client == e.Client && b.key.fail == "" {
		b.mu.RLock()
		if !b.dead {
			b.record(e)
			b.mu.RUnlock()
			return true
		}
		b.mu.RUnlock()
	}
	b := a.add(e)
	if b == nil {
		return false
	}
	slot.Store(b)
	return true
}

// emitVia is eventLog.emit with the warm path's bucket cache (addVia) for the lines it aggregates.
func (l *eventLog) emitVia(e *Event, slot *atomic.Pointer[aggBucket]) {
	if slot == nil || l.perCall || !e.warmSuccess() {
		l.emit(e)
		return
	}
	if !l.agg.addVia(e, slot) {
		l.drop(kindCall) // after close
	}
}

// bucket finds or makes k's bucket under the lock (nil: closed).
func (a *aggregator) bucket(k aggKey) *aggBucket {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	var cur map[aggKey]*aggBucket
	if m := a.read.Load(); m != nil {
		cur = *m
		if b := cur[k]; b != nil {
			return b
		}
	}
	b := a.dirty[k]
	if b == nil {
		if a.dirty == nil {
			a.dirty = map[aggKey]*aggBucket{}
		}
		b = &aggBucket{key: k}
		a.dirty[k] = b
	}
	// Publish the dirty buckets once the misses have paid for the copy (as sync.Map does): new
	// artifacts leave this lock after a few calls, not at the next collect.
	if a.misses++; a.misses > len(cur) {
		next := make(map[aggKey]*aggBucket, len(cur)+len(a.dirty))
		maps.Copy(next, cur)
		maps.Copy(next, a.dirty)
		a.read.Store(&next)
		a.dirty, a.misses = nil, 0
	}
	return b
}

// record adds e (b.mu held for reading: the bucket is not dead).
func (b *aggBucket) record(e *Event) {
	d := e.DurationNS
	b.n.Add(1)
	b.sum.Add(d)
	b.sandbox.Add(e.SandboxNS)
	b.hist[histIndex(d)].Add(1)
	var t int64
	if !e.Time.IsZero() {
		t = e.Time.UnixNano()
	}
	b.last.Store(t)
	if inv := math.MaxInt64 - d; inv > b.minInv.Load() {
		atomicmax.Raise(&b.minInv, inv)
	}
	if d+1 <= b.max1.Load() {
		return
	}
	atomicmax.Raise(&b.max1, d+1)
	b.slowMu.Lock()
	if !b.hasSlow {
		b.first, b.slow, b.slowD, b.hasSlow = e.Time, *e, d, true
	} else if d > b.slowD {
		b.slowD = d
		b.slow.TraceID, b.slow.CallID, b.slow.ParentCallID, b.slow.Depth = e.TraceID, e.CallID, e.ParentCallID, e.Depth
	}
	b.slowMu.Unlock()
}

// aggSnapshot is a bucket's interval, copied out under its lock so that the line is formatted
// without holding it.
type aggSnapshot struct {
	n            int64
	first, last  time.Time
	sum, sandbox int64
	minD, maxD   int64
	slow         Event
	pairs        []int64 // (bucket, count) pairs
}

// take moves the bucket's interval into s and resets the bucket, with atomic swaps: an add
// under way lands in this interval or the next (its count in one and its duration in the other
// at worst), none is lost.
func (b *aggBucket) take(s *aggSnapshot) {
	s.n, s.sum, s.sandbox = b.n.Swap(0), b.sum.Swap(0), b.sandbox.Swap(0)
	s.last = time.Time{}
	if t := b.last.Swap(0); t != 0 {
		s.last = time.Unix(0, t).UTC()
	}
	s.minD, s.maxD = 0, 0
	if inv := b.minInv.Swap(0); inv != 0 {
		s.minD = math.MaxInt64 - inv
	}
	if m := b.max1.Swap(0); m != 0 {
		s.maxD = m - 1
	}
	s.pairs = s.pairs[:0]
	for i := range b.hist {
		if c := b.hist[i].Swap(0); c != 0 {
			s.pairs = append(s.pairs, int64(i), int64(c))
		}
	}
	b.slowMu.Lock()
	s.first, s.slow = b.first, b.slow
	b.slow, b.slowD, b.hasSlow, b.first = Event{}, 0, false, time.Time{}
	b.slowMu.Unlock()
	s.slow.Role, s.slow.Method = b.key.role, b.key.method // the labels a caller's errors share
}

// event fills e with the snapshot's aggregate line; pairs is reused for its histogram.
func (s *aggSnapshot) event(e *Event, pairs *[]int64) {
	*e = Event{Time: s.last, TraceID: s.slow.TraceID, CallID: s.slow.CallID, ParentCallID: s.slow.ParentCallID, Depth: s.slow.Depth,
		Role: s.slow.Role, Method: s.slow.Method, Client: s.slow.Client, OK: s.slow.OK, Action: s.slow.Action, Reason: s.slow.Reason,
		FailureType: s.slow.FailureType, FailureClass: s.slow.FailureClass, FailureRule: s.slow.FailureRule,
		ProgramSource: s.slow.ProgramSource, ArtifactHit: s.slow.ArtifactHit, ArtifactGen: s.slow.ArtifactGen,
		GenerationTrigger: s.slow.GenerationTrigger, PromptVersion: s.slow.PromptVersion, ContractFingerprint: s.slow.ContractFingerprint,
		DurationNS: s.sum, SandboxNS: s.sandbox,
		Kind: EventAggregate, Count: s.n, FirstTime: s.first, DurationMaxNS: s.maxD}
	*pairs = append((*pairs)[:0], s.pairs...)
	e.DurationHist = *pairs
	e.DurationP50NS = histQuantile(s.pairs, s.n, 0.50, s.minD, s.maxD)
	e.DurationP99NS = histQuantile(s.pairs, s.n, 0.99, s.minD, s.maxD)
}

// histQuantile is the nearest-rank quantile p of n values held as (bucket, count) pairs.
func histQuantile(pairs []int64, n int64, p float64, minV, maxV int64) int64 {
	rank := max(int64(math.Ceil(p*float64(n))), 1)
	var seen int64
	for i := 0; i+1 < len(pairs); i += 2 {
		seen += pairs[i+1]
		if seen >= rank {
			return histValue(int(pairs[i]), minV, maxV)
		}
	}
	return maxV
}

// collect hands every bucket's interval with calls to fn (in no set order) and publishes the
// buckets made since the last collect; final closes the aggregator (later adds fail). fn runs
// with the aggregator's lock held (it only formats and buffers a line), never a bucket's.
func (a *aggregator) collect(final bool, fn func(*aggSnapshot)) { a.collectSome(final, true, fn) }

// Aggregates are written at an interval's end once they stand for aggMinCalls calls (so that
// a line of ~700 bytes costs at most ~3.5 bytes per call), and at the latest after aggMaxIntervals
// intervals (an artifact with few calls gets a line a minute, not one per second); Flush, Stats
// and Close write every one (all).
const (
	aggMinCalls     = 200
	aggMaxIntervals = 60
)

// collectSome is collect where all=false writes only the aggregates that are due.
func (a *aggregator) collectSome(final, all bool, fn func(*aggSnapshot)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = final
	var cur map[aggKey]*aggBucket
	if m := a.read.Load(); m != nil {
		cur = *m
	}
	var s aggSnapshot
	var released []*aggBucket
	visit := func(b *aggBucket) {
		// Taking an interval needs no lock (take); only marking the bucket dead waits for the
		// adders under way. (A write lock each interval stopped every call of the artifact until
		// the collecting goroutine was scheduled again.)
		if final {
			b.mu.Lock()
		}
		has := b.n.Load() > 0
		if has {
			b.idle = 0
			b.age++
			if has = all || b.n.Load() >= aggMinCalls || b.age >= aggMaxIntervals; has {
				b.take(&s)
				b.age = 0
			}
		} else {
			b.idle++
		}
		if final {
			b.dead = true
			b.mu.Unlock()
		}
		if has {
			fn(&s)
		}
		if !final && b.idle >= aggIdleIntervals {
			released = append(released, b)
		}
	}
	for _, b := range cur {
		visit(b)
	}
	for _, b := range a.dirty {
		visit(b)
	}
	if final || (len(a.dirty) == 0 && len(released) == 0) {
		a.dirty = nil
		return
	}
	next := make(map[aggKey]*aggBucket, len(cur)+len(a.dirty)-len(released))
	for k, b := range cur {
		next[k] = b
	}
	for k, b := range a.dirty {
		next[k] = b
	}
	for k, b := range next {
		if b.idle >= aggIdleIntervals {
			delete(next, k)
		}
	}
	a.read.Store(&next) // first unpublish, then mark dead: an adder that sees dead finds the new map
	a.dirty, a.misses = nil, 0
	for _, b := range released {
		b.mu.Lock()
		has := b.n.Load() > 0 // added between visit and now, through the old map
		if has {
			b.take(&s)
		}
		b.dead = true
		b.mu.Unlock()
		if has {
			fn(&s)
		}
	}
}
