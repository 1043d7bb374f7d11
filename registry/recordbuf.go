package registry

import (
	"sync"
	"time"

	"github.com/artifactforge/forge/internal/atomicmax"
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

// BufferedDelta is what a flush window adds to one artifact. Counters (sums and max) and Calls
// count every outcome, whichever generation of the code produced it. The rest is generation
// Gen's alone (the newest generation recorded in the window; 0: not known): Counters.Recent holds
// its outcome letters, oldest first, at most RecentWindow; GenCalls and GenFailures count its
// outcomes and failures; LastClass and LastReason are its last failure ("" when it had none).
type BufferedDelta struct {
	Counters    Counters
	Calls       int64
	LastClass   string
	LastReason  string
	Gen         int
	GenCalls    int64
	GenFailures int64
}

func (b BufferedDelta) delta() delta {
	return delta{c: b.Counters, calls: b.Calls, recent: []byte(b.Counters.Recent), lastClass: b.LastClass, lastReason: b.LastReason,
		gen: b.Gen, gcalls: b.GenCalls, gfails: b.GenFailures}
}

func bufferedOf(d delta) BufferedDelta {
	c := d.c
	c.Recent = string(d.recent)
	return BufferedDelta{Counters: c, Calls: d.calls, LastClass: d.lastClass, LastReason: d.lastReason,
		Gen: d.gen, GenCalls: d.gcalls, GenFailures: d.gfails}
}

// ApplyTo merges the delta into a exactly as a flushed journal record is merged into an artifact:
// sums, max and last use at now whatever the generation; the recent window and its failure rate,
// the last failure and the candidate -> durable promotion (DurableAfter successes in the window,
// no health failure) only when Gen is a's generation or 0 (see RATIONALE, "Per-generation
// accounting").
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

// Record adds one call's outcome, of a generation not known (as Recorder.Record): it is judged
// with whatever generation the store holds when it is merged.
func (b *RecordBuffer) Record(role, method string, o Outcome, d time.Duration, reason string) {
	b.get(Key{role, method}).record(0, o, d, reason)
}

// RecordGen adds one call's outcome, produced by generation gen of role.method (0: not known).
// It counts in the method's totals whatever happens to gen; it enters the recent window and the
// last failure only while gen is the artifact's generation: outcomes of a generation older than
// one already recorded in this flush window, or merged into an artifact at another generation,
// do not (see BufferedDelta).
func (b *RecordBuffer) RecordGen(role, method string, gen int, o Outcome, d time.Duration, reason string) {
	b.get(Key{role, method}).record(gen, o, d, reason)
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
func (h *RecordHandle) Record(o Outcome, d time.Duration, reason string) { h.p.record(0, o, d, reason) }

// RecordGen adds one call's outcome of generation gen, as RecordBuffer.RecordGen does.
func (h *RecordHandle) RecordGen(gen int, o Outcome, d time.Duration, reason string) {
	h.p.record(gen, o, d, reason)
}

// HandleRecorder is a MetricsRecorder that hands out RecordHandles (both backends' recorders).
type HandleRecorder interface {
	Handle(role, method string) *RecordHandle
}

var failureClasses = [...]string{IntrinsicFailure: "intrinsic", AdaptiveFailure: "adaptive", ExtrinsicFailure: "extrinsic", CallerFailure: "caller"}

func (p *pending) record(gen int, o Outcome, d time.Duration, reason string) {
	if o == Success && gen != 0 && int64(gen) == p.fastGen.Load() { // see pending
		p.fastN.Add(1)
		p.fastSum.Add(int64(d))
		if int64(d) > p.fastMax.Load() {
			atomicmax.Raise(&p.fastMax, int64(d))
		}
		return
	}
	p.mu.Lock()
	p.fastGen.Store(0)
	p.fold()
	p.calls++
	p.c.TotalDurationNanos += int64(d)
	if int64(d) > p.c.MaxDurationNanos {
		p.c.MaxDurationNanos = int64(d)
	}
	switch o {
	case Success:
		p.c.SuccessCount++
	case IntrinsicFailure:
		p.c.IntrinsicFailureCount++
	case AdaptiveFailure:
		p.c.AdaptiveFailureCount++
	case ExtrinsicFailure:
		p.c.ExtrinsicFailureCount++
	case CallerFailure:
		p.c.CallerFailureCount++
	}
	if o != Success {
		p.c.FailureCount++
	}
	// The window is one generation's: a newer generation starts it afresh, an older one's outcome
	// (a call still running the replaced code) stays out of it.
	if gen != 0 && p.gen != gen {
		if p.gcalls > 0 && p.gen != 0 && gen < p.gen {
			p.mu.Unlock()
			return
		}
		if p.gen != 0 {
			p.wn, p.wat, p.gcalls, p.gfails, p.lastClass, p.lastReason = 0, 0, 0, 0, "", ""
		}
		p.gen = gen
	}
	p.gcalls++
	if o != Success {
		p.gfails++
		p.lastClass = failureClasses[o]
		p.lastReason = CapReason(reason)
	}
	p.push(outcomeLetters[o])
	if o == Success && gen != 0 && p.successesOnly() {
		p.fastGen.Store(int64(gen))
	}
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
		p.fastGen.Store(0) // the window is reset below
		p.fold()
		if p.calls > 0 {
			d := p.delta
			d.recent = p.window()
			out[k] = d
			p.delta = delta{}
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
	p.fastGen.Store(0)
	p.fold()
	p.calls += d.calls
	addCounters(&p.c, d.c)
	since := p.genWin()
	since.recent = p.window()
	w := laterWindow(d.genWin(), since)
	p.setGenWin(w)
	p.setWindow(w.recent)
	p.recent = nil
	p.mu.Unlock()
}
