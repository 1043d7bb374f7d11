package registry

import (
	"sync"
	"time"
)

// RecordBuffer is the in-memory half of a Recorder (the Recorder keeps its outcomes in one), for
// backends that flush call outcomes somewhere else than the directory store's journals (the fleet
// store's metrics bucket): Record
// adds one call's outcome without I/O (and, once a key has been seen, without allocating), Take
// hands the buffered deltas to a flush, GiveBack returns the ones a flush could not write. The
// per-call bookkeeping (counters, the recent window, the last failure and its cap) is the
// Recorder's, so both backends count a call the same way.
type RecordBuffer struct {
	mu      sync.RWMutex
	pending map[Key]*pending
}

// NewRecordBuffer returns an empty buffer.
func NewRecordBuffer() *RecordBuffer { return &RecordBuffer{pending: make(map[Key]*pending)} }

// BufferedDelta is what a flush window adds to one artifact: summed counters (Counters.Recent
// holds the outcome letters, oldest first, at most RecentWindow), the calls, and the last
// failure's class and reason ("" when the window had no failure).
type BufferedDelta struct {
	Counters   Counters
	Calls      int64
	LastClass  string
	LastReason string
}

func (b BufferedDelta) delta() delta {
	return delta{c: b.Counters, calls: b.Calls, recent: []byte(b.Counters.Recent), lastClass: b.LastClass, lastReason: b.LastReason}
}

func bufferedOf(d delta) BufferedDelta {
	c := d.c
	c.Recent = string(d.recent)
	return BufferedDelta{Counters: c, Calls: d.calls, LastClass: d.lastClass, LastReason: d.lastReason}
}

// ApplyTo merges the delta into a exactly as a flushed journal record is merged into an artifact:
// sums and max, the recent window and its failure rate, the last failure, last use at now, and
// the candidate -> durable promotion after DurableAfter successes with no health failure.
func (b BufferedDelta) ApplyTo(a *Artifact, now time.Time) { b.delta().applyTo(a, now) }

func (b *RecordBuffer) get(k Key) *pending {
	b.mu.RLock()
	p := b.pending[k]
	b.mu.RUnlock()
	if p == nil {
		b.mu.Lock()
		if p = b.pending[k]; p == nil {
			p = &pending{}
			b.pending[k] = p
		}
		b.mu.Unlock()
	}
	return p
}

// Record adds one call's outcome (as Recorder.Record).
func (b *RecordBuffer) Record(role, method string, o Outcome, d time.Duration, reason string) {
	b.get(Key{role, method}).record(o, d, reason)
}

// RecordHandle records the outcomes of one artifact with no lookup: the warm path keeps one per
// live program, so that a call touches its artifact's counters and nothing else of the buffer.
// A handle stays valid for the buffer's life (an artifact's entry is reset by each flush, never
// removed).
type RecordHandle struct{ p *pending }

// Handle returns role.method's handle (one map lookup, and an allocation the first time).
func (b *RecordBuffer) Handle(role, method string) *RecordHandle {
	return &RecordHandle{b.get(Key{role, method})}
}

// Record adds one call's outcome, as RecordBuffer.Record of the handle's artifact does.
func (h *RecordHandle) Record(o Outcome, d time.Duration, reason string) { h.p.record(o, d, reason) }

// HandleRecorder is a MetricsRecorder that hands out RecordHandles (both backends' recorders).
type HandleRecorder interface {
	Handle(role, method string) *RecordHandle
}

func (p *pending) record(o Outcome, d time.Duration, reason string) {
	p.mu.Lock()
	p.calls++
	p.c.TotalDurationNanos += int64(d)
	if int64(d) > p.c.MaxDurationNanos {
		p.c.MaxDurationNanos = int64(d)
	}
	switch o {
	case Success:
		p.c.SuccessCount++
	default:
		p.c.FailureCount++
		switch o {
		case IntrinsicFailure:
			p.c.IntrinsicFailureCount++
			p.lastClass = "intrinsic"
		case AdaptiveFailure:
			p.c.AdaptiveFailureCount++
			p.lastClass = "adaptive"
		case ExtrinsicFailure:
			p.c.ExtrinsicFailureCount++
			p.lastClass = "extrinsic"
		case CallerFailure:
			p.c.CallerFailureCount++
			p.lastClass = "caller"
		}
		p.lastReason = CapReason(reason)
	}
	p.push(outcomeLetters[o])
	p.mu.Unlock()
}

// Take removes and returns the buffered deltas (keys with no call since the last Take are left out).
func (b *RecordBuffer) Take() map[Key]BufferedDelta {
	ds := b.take()
	out := make(map[Key]BufferedDelta, len(ds))
	for k, d := range ds {
		out[k] = bufferedOf(d)
	}
	return out
}

func (b *RecordBuffer) take() map[Key]delta {
	out := make(map[Key]delta)
	b.mu.RLock()
	defer b.mu.RUnlock()
	for k, p := range b.pending {
		p.mu.Lock()
		if p.calls > 0 {
			out[k] = delta{c: p.c, calls: p.calls, recent: p.window(), lastReason: p.lastReason, lastClass: p.lastClass}
			p.c, p.calls, p.lastReason, p.lastClass = Counters{}, 0, "", ""
			p.wn, p.wat = 0, 0
		}
		p.mu.Unlock()
	}
	return out
}

// GiveBack returns a delta that could not be written, to be flushed with the next Take; the calls
// recorded since are kept newer than it.
func (b *RecordBuffer) GiveBack(k Key, d BufferedDelta) { b.giveBack(k, d.delta()) }

func (b *RecordBuffer) giveBack(k Key, d delta) {
	p := b.get(k)
	p.mu.Lock()
	p.calls += d.calls
	addCounters(&p.c, d.c)
	if p.lastClass == "" {
		p.lastClass, p.lastReason = d.lastClass, d.lastReason
	}
	p.setWindow(mergeRecent(d.recent, p.window()))
	p.mu.Unlock()
}
