package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/artifactforge/forge/classifier"
)

// Outcome is the result of one call, as far as an artifact's health is concerned.
type Outcome uint8

// Outcomes. Extrinsic and caller failures are counted but never make an artifact unhealthy.
const (
	Success Outcome = iota
	IntrinsicFailure
	AdaptiveFailure
	ExtrinsicFailure
	CallerFailure
)

var outcomeLetters = [...]byte{Success: 's', IntrinsicFailure: 'i', AdaptiveFailure: 'a', ExtrinsicFailure: 'e', CallerFailure: 'c'}

// OutcomeForClass maps a failure class name (intrinsic, adaptive, extrinsic, caller) to an Outcome;
// "" means success.
func OutcomeForClass(class string) (Outcome, error) {
	switch class {
	case "":
		return Success, nil
	case string(classifier.Intrinsic):
		return IntrinsicFailure, nil
	case string(classifier.Adaptive):
		return AdaptiveFailure, nil
	case string(classifier.Extrinsic):
		return ExtrinsicFailure, nil
	case string(classifier.Caller):
		return CallerFailure, nil
	}
	return 0, fmt.Errorf("registry: unknown failure class %q", class)
}

// DurableAfter is how many successful calls in the recent window, with no health failure there,
// promote a candidate to durable (the window holds the current generation's calls only).
const DurableAfter = 3

// DefaultFlushInterval is how often a Recorder appends buffered counters to its metrics journal.
const DefaultFlushInterval = time.Second

// Recorder buffers per-call outcomes in memory and appends them to its metrics journal (one record
// per touched artifact, one write and one fsync per flush; see journal.go) at most once per
// interval and on Close, so that the call path never waits on disk and a flush costs O(what
// changed). The journal is folded into the artifact files in the background. A crash loses at
// most the counters of the current window; never code or contracts.
type Recorder struct {
	store    *Store
	interval time.Duration

	jmu        sync.Mutex // the journal; held by Flush (under flushMu) and the compactor's seal
	j          *journal
	maxBytes   int64         // JournalMaxBytes
	maxAge     time.Duration // JournalMaxAge
	compacting sync.Mutex
	bgCompact  sync.WaitGroup

	buf *RecordBuffer // the outcomes not yet flushed

	flushMu sync.Mutex // one flush at a time
	stop    chan struct{}
	done    chan struct{}
	closed  sync.Once

	// OnFlush, if set, is called after each flush with what it merged and what it could not.
	OnFlush func(FlushReport)
	// OnCompact, if set, is called after each compaction this recorder runs.
	OnCompact func(CompactReport, error)
}

// pending is one artifact's buffered outcomes. The recent window is kept in place (a ring) while
// buffered, so that recording a call touches this struct only and moves no bytes; delta.recent is
// unused here (take and giveBack convert). The window, gcalls, gfails and the last failure are
// delta.gen's (see delta); the counters and calls are every generation's.
//
// While the window is full of successes of generation fastGen, another success of it changes
// only the counters: record adds those to fastN, fastSum and fastMax with atomics and no lock (a
// mutex taken by every warm call made convoys under load), and fold moves them into the delta
// under mu before anything else reads or changes it.
type pending struct {
	mu sync.Mutex
	delta
	win     [RecentWindow]byte // outcome letters, the oldest at win[wat]
	wn, wat int

	fastGen                 atomic.Int64 // 0: every outcome takes mu
	fastN, fastSum, fastMax atomic.Int64
}

// fold moves the successes recorded without the lock into the delta (p.mu held). They are the
// generation's: each is a success letter in the window.
func (p *pending) fold() {
	n, sum, mx := p.fastN.Swap(0), p.fastSum.Swap(0), p.fastMax.Swap(0)
	p.calls += n
	p.c.SuccessCount += n
	p.c.TotalDurationNanos += sum
	p.c.MaxDurationNanos = max(p.c.MaxDurationNanos, mx)
	p.gcalls += n
	for i := int64(0); i < min(n, RecentWindow); i++ {
		p.push(outcomeLetters[Success])
	}
}

// successesOnly reports whether the window is full of successes (p.mu held).
func (p *pending) successesOnly() bool {
	if p.wn < RecentWindow {
		return false
	}
	for _, l := range p.win {
		if l != outcomeLetters[Success] {
			return false
		}
	}
	return true
}

// push appends an outcome letter to the window, dropping the oldest when it is full.
func (p *pending) push(l byte) {
	if p.wn < RecentWindow {
		p.win[(p.wat+p.wn)%RecentWindow] = l
		p.wn++
		return
	}
	p.win[p.wat] = l
	p.wat = (p.wat + 1) % RecentWindow
}

// window returns the window's letters, oldest first (nil when empty).
func (p *pending) window() []byte {
	if p.wn == 0 {
		return nil
	}
	out := make([]byte, p.wn)
	for i := range out {
		out[i] = p.win[(p.wat+i)%RecentWindow]
	}
	return out
}

// setWindow replaces the window with the last RecentWindow letters of b.
func (p *pending) setWindow(b []byte) {
	if len(b) > RecentWindow {
		b = b[len(b)-RecentWindow:]
	}
	p.wat, p.wn = 0, copy(p.win[:], b)
}

// delta is what a flush window adds to one artifact. Its counters and calls are the totals of
// every outcome, whichever generation produced it; the recent window, the last failure, gcalls and
// gfails are the outcomes of generation gen only (the newest one recorded in the window; 0: not
// known, the outcomes of whatever generation the delta is merged into). See applyTo for the rule.
type delta struct {
	c          Counters
	calls      int64
	recent     []byte // gen's outcome letters, oldest first, at most RecentWindow
	lastReason string // gen's last failure
	lastClass  string
	gen        int
	gcalls     int64 // gen's outcomes (recent holds the last RecentWindow of them)
	gfails     int64 // gen's failures
}

// genWin is the part of a delta that belongs to its generation: the recent letters, the last
// failure and their counts.
type genWin struct {
	gen                   int
	recent                []byte
	lastClass, lastReason string
	gcalls, gfails        int64
}

func (d *delta) genWin() genWin {
	return genWin{gen: d.gen, recent: d.recent, lastClass: d.lastClass, lastReason: d.lastReason, gcalls: d.gcalls, gfails: d.gfails}
}

func (d *delta) setGenWin(w genWin) {
	d.gen, d.recent, d.lastClass, d.lastReason, d.gcalls, d.gfails = w.gen, w.recent, w.lastClass, w.lastReason, w.gcalls, w.gfails
}

// laterWindow is the window of older's outcomes followed by newer's (in recording order): one
// window when both are of the same generation (or either's is not known), else the newer
// generation's alone; the other generation's outcomes are left out (they stay in the totals). A
// window with no outcome takes no part.
func laterWindow(older, newer genWin) genWin {
	switch {
	case older.gcalls == 0:
		return newer
	case newer.gcalls == 0:
		return older
	case older.gen != 0 && newer.gen != 0 && older.gen != newer.gen:
		if newer.gen > older.gen {
			return newer
		}
		return older // the outcomes recorded since are a replaced generation's (calls still in flight)
	}
	w := newer
	if w.gen == 0 {
		w.gen = older.gen
	}
	w.recent = mergeRecent(older.recent, newer.recent)
	w.gcalls, w.gfails = older.gcalls+newer.gcalls, older.gfails+newer.gfails
	if w.lastClass == "" {
		w.lastClass, w.lastReason = older.lastClass, older.lastReason
	}
	return w
}

// FlushReport tells what one flush merged (calls per artifact) and what it dropped and why.
type FlushReport struct {
	Merged  map[Key]int64
	Dropped map[Key]error
}

// NewRecorder starts a recorder that flushes into s every interval (DefaultFlushInterval if 0).
func NewRecorder(s *Store, interval time.Duration) *Recorder {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	r := &Recorder{store: s, interval: interval, buf: NewRecordBuffer(), maxBytes: JournalMaxBytes, maxAge: JournalMaxAge,
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.Flush()
		case <-r.stop:
			return
		}
	}
}

// MaxFailureReasonBytes bounds the last_failure_reason an artifact keeps: every later load of
// the artifact file pays for it, and guest code chooses its error text. The same bound as the
// sandbox's cap on error messages (4 KiB).
const MaxFailureReasonBytes = 4 << 10

// CapReason returns reason cut to MaxFailureReasonBytes (at a rune boundary), saying how much
// was cut.
func CapReason(reason string) string {
	if len(reason) <= MaxFailureReasonBytes {
		return reason
	}
	cut := MaxFailureReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut] + fmt.Sprintf(" [... %d more bytes cut]", len(reason)-cut)
}

// Record adds one call's outcome, of a generation not known (see RecordGen). It takes no system
// call and, once role.method has been seen, allocates nothing. reason is kept as
// last_failure_reason for failures (cut to MaxFailureReasonBytes).
func (r *Recorder) Record(role, method string, o Outcome, d time.Duration, reason string) {
	r.buf.RecordGen(role, method, 0, o, d, reason)
}

// RecordGen adds one call's outcome, produced by generation gen of role.method's code (see
// RecordBuffer.RecordGen).
func (r *Recorder) RecordGen(role, method string, gen int, o Outcome, d time.Duration, reason string) {
	r.buf.RecordGen(role, method, gen, o, d, reason)
}

// Handle returns role.method's RecordHandle: Record without the lookup (see RecordBuffer.Handle).
func (r *Recorder) Handle(role, method string) *RecordHandle { return r.buf.Handle(role, method) }

// take removes and returns the buffered deltas.
func (r *Recorder) take() map[Key]delta { return r.buf.take() }

// giveBack returns deltas that could not be written to the buffer, to be tried again next flush.
func (r *Recorder) giveBack(k Key, d delta) { r.buf.giveBack(k, d) }

func addCounters(dst *Counters, d Counters) {
	dst.SuccessCount += d.SuccessCount
	dst.FailureCount += d.FailureCount
	dst.IntrinsicFailureCount += d.IntrinsicFailureCount
	dst.AdaptiveFailureCount += d.AdaptiveFailureCount
	dst.ExtrinsicFailureCount += d.ExtrinsicFailureCount
	dst.CallerFailureCount += d.CallerFailureCount
	dst.TotalDurationNanos += d.TotalDurationNanos
	if d.MaxDurationNanos > dst.MaxDurationNanos {
		dst.MaxDurationNanos = d.MaxDurationNanos
	}
}

func mergeRecent(older, newer []byte) []byte {
	all := append(append([]byte(nil), older...), newer...)
	if len(all) > RecentWindow {
		all = all[len(all)-RecentWindow:]
	}
	return all
}

// Flush appends every buffered delta to the recorder's metrics journal now (one write, one
// fsync), makes it visible to this process's readers at once, and writes the rare lifecycle change
// it causes (a candidate proven durable) to the artifact file. Deltas for an artifact that no
// longer exists are dropped; deltas that hit a write error are kept for the next flush.
func (r *Recorder) Flush() FlushReport {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	deltas := r.take()
	rep := FlushReport{Merged: map[Key]int64{}, Dropped: map[Key]error{}}
	if len(deltas) == 0 {
		return rep
	}
	s := r.store
	now := time.Now().UTC()
	keys := make([]Key, 0, len(deltas))
	for k, d := range deltas {
		s.mu.RLock()
		cached := s.artifacts[k] != nil
		s.mu.RUnlock()
		if !cached {
			if _, err := os.Stat(s.ArtifactPath(k.Role, k.Method)); errors.Is(err, fs.ErrNotExist) {
				rep.Dropped[k] = fmt.Errorf("registry: %d call outcome(s) for %s dropped: the artifact is gone", d.calls, k)
				continue
			}
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Role != keys[j].Role {
			return keys[i].Role < keys[j].Role
		}
		return keys[i].Method < keys[j].Method
	})

	r.jmu.Lock()
	j, err := r.journalLocked()
	if err != nil {
		r.jmu.Unlock()
		r.giveBackAll(&rep, keys, deltas, err)
		return rep
	}
	buf := make([]byte, 0, 160*len(keys))
	ends := make([]int, len(keys)) // where each record's line ends in buf
	recs := make([]keyedRec, len(keys))
	for i, k := range keys {
		d := deltas[k]
		buf = appendRecord(buf, j.seq+int64(i)+1, k, now, &d)
		ends[i] = len(buf)
		recs[i] = keyedRec{k, ovRec{j: j.id, seq: j.seq + int64(i) + 1, at: now, d: d}}
	}
	n, werr := j.f.Write(buf)
	sealNow := false
	if werr != nil {
		// A short write: the records written whole are in the journal (readers count them); the
		// rest go back to the buffer for the next journal, and this one is sealed (readers skip
		// its torn last line).
		whole := 0
		for whole < len(keys) && ends[whole] <= n {
			whole++
		}
		r.giveBackAll(&rep, keys[whole:], deltas, werr)
		keys, recs, sealNow = keys[:whole], recs[:whole], true
	} else if serr := j.f.Sync(); serr != nil {
		// Written but maybe not durable: giving the records back would count them twice (readers
		// may have seen them). They stay, the error is reported, and the journal is sealed.
		for _, k := range keys {
			rep.Dropped[k] = fmt.Errorf("registry: %s: fsync of the metrics journal %s failed (%v): its records may not survive a crash", k, j.path, writeErr(s.root, serr))
		}
		sealNow = true
	}
	j.seq += int64(len(recs))
	j.size += int64(n)
	if len(recs) == 0 {
		if sealNow {
			s.sealJournal(j)
			r.j = nil
		}
		r.jmu.Unlock()
		if r.OnFlush != nil {
			r.OnFlush(rep)
		}
		return rep
	}
	promoted, uncached := s.appendOwn(j.id, j.size, recs)
	seal := sealNow || j.size >= r.maxBytes || time.Since(j.created) >= r.maxAge
	r.jmu.Unlock()
	for _, k := range keys {
		rep.Merged[k] = deltas[k].calls
	}
	// The rare lifecycle change is written to the file (folding what the journals hold for it).
	for _, k := range uncached {
		if a, err := s.load(k.Role, k.Method); err == nil {
			s.mu.RLock()
			sn := s.artifacts[k]
			s.mu.RUnlock()
			if sn != nil && sn.base == Candidate && a.Lifecycle == Durable {
				promoted = append(promoted, k)
			}
		}
	}
	// One index write per role for the whole batch, not one per promoted artifact (a thousand
	// candidates proven at once rewrote their role's index a thousand times).
	byRole := map[string][]*Summary{}
	for _, k := range promoted {
		file, _, st, err := s.update(k.Role, k.Method, nil, nil, false, func(a *Artifact, exists bool) error {
			if !exists {
				return ErrNotFound
			}
			return nil
		})
		if err == nil {
			sm := summaryOf(file, st)
			byRole[k.Role] = append(byRole[k.Role], &sm)
		}
	}
	for role, sms := range byRole {
		s.indexPutMany(role, sms)
	}
	if seal {
		r.sealAndCompact(false)
	}
	if r.OnFlush != nil {
		r.OnFlush(rep)
	}
	return rep
}

// giveBackAll keeps deltas that could not be written for the next flush and reports them.
func (r *Recorder) giveBackAll(rep *FlushReport, keys []Key, deltas map[Key]delta, err error) {
	for _, k := range keys {
		r.giveBack(k, deltas[k])
		rep.Dropped[k] = fmt.Errorf("registry: %d call outcome(s) for %s kept for the next flush: %w", deltas[k].calls, k, writeErr(r.store.root, err))
	}
}

// journalLocked returns the live journal, opening one if needed (the caller holds jmu).
func (r *Recorder) journalLocked() (*journal, error) {
	if r.j == nil {
		j, err := r.store.openJournal()
		if err != nil {
			return nil, err
		}
		r.j = j
	}
	return r.j, nil
}

// sealAndCompact seals the live journal (the next flush opens a new one) and folds the sealed
// journals into the files: in the background, or now (wait).
func (r *Recorder) sealAndCompact(wait bool) {
	r.jmu.Lock()
	if r.j != nil {
		r.store.sealJournal(r.j)
		r.j = nil
	}
	r.jmu.Unlock()
	run := func() {
		if !r.compacting.TryLock() {
			return // one compaction at a time; the next seal picks up what this one leaves
		}
		defer r.compacting.Unlock()
		rep, err := r.store.Compact()
		if r.OnCompact != nil {
			r.OnCompact(rep, err)
		}
	}
	if wait {
		r.bgCompact.Wait()
		run()
		return
	}
	r.bgCompact.Add(1)
	go func() {
		defer r.bgCompact.Done()
		run()
	}()
}

// applyTo merges the delta into a. The counters (sums and max) and the last use take every
// outcome: they are the method's totals, whichever code produced them. The recent window, its
// failure rate, the last failure and the candidate -> durable promotion take only the outcomes of
// a's current generation (d.gen == a.Generation, or d.gen not known): they judge the code a
// runs, and an outcome of the code a replaced (flushed after the repair, regeneration, rollback
// or reload that replaced it) says nothing about it. A candidate is promoted when its recent
// window (which Promote empties) holds DurableAfter successes and no health failure: its own
// calls, not those of the generations before it.
func (d delta) applyTo(a *Artifact, now time.Time) {
	addCounters(&a.Counters, d.c)
	t := now
	a.LastUsedAt = &t
	if len(d.recent) == 0 || (d.gen != 0 && d.gen != a.Generation) {
		return
	}
	a.Recent = string(mergeRecent([]byte(a.Recent), d.recent))
	health, ok := 0, 0
	for i := 0; i < len(a.Recent); i++ {
		switch a.Recent[i] {
		case 'i', 'a':
			health++
		case 's':
			ok++
		}
	}
	a.RecentFailureRate = 0
	if len(a.Recent) > 0 {
		a.RecentFailureRate = float64(health) / float64(len(a.Recent))
	}
	if d.lastClass != "" {
		a.LastFailureClass, a.LastFailureReason = d.lastClass, d.lastReason
	}
	if a.Lifecycle == Candidate && health == 0 && ok >= DurableAfter {
		a.Lifecycle = Durable
	}
}

// Close stops the background flusher, flushes what is buffered and seals the journal. If
// CompactAtJournals or more journals wait in metrics/ (short-lived processes each leave one), it
// compacts them before returning; a background compaction still running is waited for.
func (r *Recorder) Close() FlushReport {
	r.closed.Do(func() { close(r.stop) })
	<-r.done
	rep := r.Flush()
	r.jmu.Lock()
	if r.j != nil {
		r.store.sealJournal(r.j)
		r.j = nil
	}
	r.jmu.Unlock()
	r.bgCompact.Wait()
	if st, err := r.store.Journals(); err == nil && st.Journals >= CompactAtJournals {
		r.sealAndCompact(true)
	}
	return rep
}
