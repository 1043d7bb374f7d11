package forge

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/selector"
)

// DefaultMaxLivePrograms bounds the compiled programs a Forge keeps ready when Options and the
// environment say nothing. A yaegi program holds at least one pooled interpreter (about 200 KiB
// of heap without generic imports, and two goroutines while it serves calls, more under
// concurrent calls of the same method); 200 of them stay under 500 goroutines and far under
// 1 GiB even when all are hot, however many methods the store holds. A working set larger than
// the budget still answers every call: an evicted method is compiled again on its next call (see
// RATIONALE.md, "The live set").
const DefaultMaxLivePrograms = 200

// DefaultMaxLiveBytes is the least memory budget of the live set when Options and the environment
// say nothing (see DefaultLiveBytes), and the budget on a machine whose memory is unknown. The
// budget bounds the memory the live programs report (sandbox.Sizer): a wasm program holds its
// compiled code and its instances' linear memories (about 12 MiB for a small method, 14 MiB of
// RSS), so 512 MiB keeps about 40 of them ready. Programs that report no size count only against
// DefaultMaxLivePrograms. In-process yaegi reports ~120 KiB per live interpreter (~195 KiB with
// generic imports), so the count bound is the one that binds it.
const DefaultMaxLiveBytes = 512 << 20

// MaxDefaultLiveBytes is the most memory budget DefaultLiveBytes gives: about 340 small wasm
// programs, so that DefaultMaxLivePrograms (200) binds first.
const MaxDefaultLiveBytes = 4 << 30

// DefaultLiveBytes is the live set's memory budget when Options and the environment say nothing:
// a quarter of the memory this process may use (physical memory, or its cgroup's limit when
// lower), within [DefaultMaxLiveBytes, MaxDefaultLiveBytes]. A fixed 512 MiB kept 43 of a working
// set of 200 distinct wasm methods, and a working set larger than the budget recompiles on every
// call (108 ms a call against 3 µs warm; RATIONALE, "A working set of hundreds").
func DefaultLiveBytes() int64 { return liveBytesFor(usableMemory()) }

// liveBytesFor is DefaultLiveBytes for a process that may use mem bytes (0: unknown).
func liveBytesFor(mem int64) int64 {
	return min(max(mem/4, DefaultMaxLiveBytes), MaxDefaultLiveBytes)
}

// liveShards spreads the live set's map over locks, so that warm calls of different methods from
// different cores do not share one lock word.
const liveShards = 16

// evictSample is how many entries an eviction looks at to pick the least recently used one
// (an approximate LRU: no list to update on every hit).
const evictSample = 8

// liveSet is the bounded set of compiled programs, one per role.method: an approximate LRU under a
// count and a memory budget. A hit is a read-locked map lookup in one of liveShards shards, a
// reference taken with one atomic add and an atomic "last used" stamp; insertions and evictions
// take the set's own mutex. A program leaves the set when it is evicted or replaced by other code
// (new generation, regeneration, rollback, reload) and is closed when the last call that runs it
// ends: the set holds one reference and every run holds one (compiled.acquire, release).
type liveSet struct {
	seed   maphash.Seed
	shards [liveShards]liveShard

	// clock advances at each insertion; a hit stamps its entry with it, so the entries with the
	// oldest stamp are the ones no call has used for the most insertions.
	clock atomic.Int64

	maxCount int   // <= 0: no count budget
	maxBytes int64 // <= 0: no memory budget

	mu     sync.Mutex
	all    []*compiled // every entry, for sampling (compiled.idx is its index)
	closed bool
	// sized counts the entries of each program that reports its memory: a backend may hand the
	// same program to several methods (wasm shares one per code and client), and the memory
	// budget counts a program once however many methods it serves.
	sized map[sandbox.Sizer]int

	evictions atomic.Int64 // programs evicted for the budget
	replaced  atomic.Int64 // programs replaced by other code of their role.method
	closes    atomic.Int64 // programs closed (their last reference released)
}

type liveShard struct {
	mu sync.RWMutex
	m  map[liveKey]*compiled
	_  [40]byte // keep shards on separate cache lines
}

func newLiveSet(maxCount int, maxBytes int64) *liveSet {
	s := &liveSet{seed: maphash.MakeSeed(), maxCount: maxCount, maxBytes: maxBytes, sized: map[sandbox.Sizer]int{}}
	for i := range s.shards {
		s.shards[i].m = map[liveKey]*compiled{}
	}
	return s
}

// liveKey is what a live program serves: one role.method for one client (WithClient). Two
// clients never share a program, so never an interpreter, an instance or a worker either (the
// sandbox keys its pools by Source.Client as well).
type liveKey struct {
	Role, Method, Client string
}

// keyOf is the live set's key of role.method for client.
func keyOf(role, method, client string) liveKey {
	return liveKey{Role: role, Method: method, Client: client}
}

func (s *liveSet) shard(k liveKey) *liveShard {
	h := maphash.String(s.seed, k.Role) ^ (maphash.String(s.seed, k.Method) * 0x9e3779b97f4a7c15)
	if k.Client != "" {
		h ^= maphash.String(s.seed, k.Client) * 0xbf58476d1ce4e5b9
	}
	return &s.shards[h%liveShards]
}

// get returns the live program of k compiled from the code with checksum sum, with a reference
// the caller releases, or nil.
func (s *liveSet) get(k liveKey, sum string) *compiled {
	sh := s.shard(k)
	sh.mu.RLock()
	p := sh.m[k]
	sh.mu.RUnlock()
	if p == nil || p.art == nil || p.art.CodeChecksum != sum || !p.acquire() {
		return nil
	}
	if now := s.clock.Load(); p.used.Load() != now {
		p.used.Store(now)
	}
	return p
}

// warmOf is k's live program and its warm state when that state was made under the role runtime
// rt, without a reference (take one with take); nil otherwise. The state is valid for the
// snapshot it was made for (w.art): then the program's code is that snapshot's by construction,
// and the checksum is not compared.
func (s *liveSet) warmOf(k liveKey, rt *roleRuntime) (*compiled, *warmState) {
	sh := s.shard(k)
	sh.mu.RLock()
	p := sh.m[k]
	sh.mu.RUnlock()
	if p == nil {
		return nil, nil
	}
	if w := p.warm.Load(); w != nil && w.rt == rt {
		return p, w
	}
	return nil, nil
}

// take acquires a reference to p for one run and stamps its use; false when p is closing.
func (s *liveSet) take(p *compiled) bool {
	if !p.acquire() {
		return false
	}
	if now := s.clock.Load(); p.used.Load() != now {
		p.used.Store(now)
	}
	return true
}

// put makes p the live program of its key, taking over the caller's reference to it. The
// program it replaces and the ones evicted for the budget lose the set's reference: each closes
// when its last run ends. On a closed set p's reference is released at once.
func (s *liveSet) put(p *compiled) {
	k := packedKey(p.art.Role, p.art.Method, p.client)
	var drop []*compiled
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		p.release()
		return
	}
	p.used.Store(s.clock.Add(1))
	sh := s.shard(k)
	sh.mu.Lock()
	old := sh.m[k]
	sh.m[k] = p
	sh.mu.Unlock()
	if old != nil {
		s.unlist(old)
		s.replaced.Add(1)
		drop = append(drop, old)
	}
	s.list(p)
	drop = s.evict(p, drop)
	s.mu.Unlock()
	for _, q := range drop {
		q.release()
	}
}

// packedKey is the key of role.method for client with the strings in one allocation: a map
// lookup that finds the entry compares the caller's strings with these (unless they are the same
// strings), so adjacent bytes are one cache line to miss at most, not three.
func packedKey(role, method, client string) liveKey {
	b := role + method + client
	return liveKey{Role: b[:len(role)], Method: b[len(role) : len(role)+len(method)], Client: b[len(role)+len(method):]}
}

// evict removes entries (never keep) until the set fits its budget, and appends them to drop.
// s.mu is held.
func (s *liveSet) evict(keep *compiled, drop []*compiled) []*compiled {
	var bytes int64
	if s.maxBytes > 0 {
		bytes = s.bytes()
	}
	for len(s.all) > 1 && ((s.maxCount > 0 && len(s.all) > s.maxCount) || (s.maxBytes > 0 && bytes > s.maxBytes)) {
		var v *compiled
		for range evictSample {
			q := s.all[rand.IntN(len(s.all))]
			if q != keep && (v == nil || q.used.Load() < v.used.Load()) {
				v = q
			}
		}
		if v == nil {
			continue // sampled only keep: sample again
		}
		s.remove(v)
		if v.sizer != nil && s.sized[v.sizer] == 0 {
			bytes -= v.sizer.LiveBytes() // its last entry: the program leaves the budget
		}
		s.evictions.Add(1)
		drop = append(drop, v)
	}
	return drop
}

// remove takes p out of its shard's map and the list. s.mu is held.
func (s *liveSet) remove(p *compiled) {
	k := keyOf(p.art.Role, p.art.Method, p.client)
	sh := s.shard(k)
	sh.mu.Lock()
	if sh.m[k] == p {
		delete(sh.m, k)
	}
	sh.mu.Unlock()
	s.unlist(p)
}

// bytes is the memory the live programs report, each program once. s.mu is held.
func (s *liveSet) bytes() int64 {
	var n int64
	for q := range s.sized {
		n += q.LiveBytes()
	}
	return n
}

// list adds p to s.all. s.mu is held.
func (s *liveSet) list(p *compiled) {
	p.idx = len(s.all)
	s.all = append(s.all, p)
	if p.sizer != nil {
		s.sized[p.sizer]++
	}
}

// unlist takes p out of s.all. s.mu is held.
func (s *liveSet) unlist(p *compiled) {
	i := p.idx
	if i < 0 || i >= len(s.all) || s.all[i] != p {
		return
	}
	if p.sizer != nil {
		if s.sized[p.sizer]--; s.sized[p.sizer] <= 0 {
			delete(s.sized, p.sizer)
		}
	}
	last := s.all[len(s.all)-1]
	s.all[i], last.idx = last, i
	s.all[len(s.all)-1] = nil
	s.all = s.all[:len(s.all)-1]
	p.idx = -1
}

// drop removes k's live programs (every client's) unless they were compiled from the code with
// checksum keep: an operator's change (rollback, bless) made other code current.
func (s *liveSet) drop(k registry.Key, keep string) {
	var gone []*compiled
	s.mu.Lock()
	for _, p := range s.all {
		if p.art.Role == k.Role && p.art.Method == k.Method && p.art.CodeChecksum != keep {
			gone = append(gone, p)
		}
	}
	for _, p := range gone {
		s.remove(p)
		s.replaced.Add(1)
	}
	s.mu.Unlock()
	for _, p := range gone {
		p.release()
	}
}

// close empties the set: every program closes now, or when the run that holds it ends. Later
// insertions are released at once.
func (s *liveSet) close() {
	s.mu.Lock()
	s.closed = true
	all := s.all
	s.all = nil
	clear(s.sized)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.m = map[liveKey]*compiled{}
		sh.mu.Unlock()
	}
	s.mu.Unlock()
	for _, p := range all {
		p.idx = -1
		p.release()
	}
}

// stats reports the live programs, the memory they report and the set's counters.
func (s *liveSet) stats() LiveStats {
	s.mu.Lock()
	st := LiveStats{Programs: len(s.all), Bytes: s.bytes(), MaxPrograms: s.maxCount, MaxBytes: s.maxBytes}
	s.mu.Unlock()
	st.Evictions, st.Replaced, st.Closed = s.evictions.Load(), s.replaced.Load(), s.closes.Load()
	return st
}

// LiveStats describes the live set: the compiled programs a Forge keeps ready.
type LiveStats struct {
	// Programs is how many programs are live now, Bytes the memory those that report it hold
	// (a program several methods share counts once).
	Programs int   `json:"programs"`
	Bytes    int64 `json:"bytes"`
	// MaxPrograms and MaxBytes are the budget (0: none).
	MaxPrograms int   `json:"max_programs"`
	MaxBytes    int64 `json:"max_bytes"`
	// Evictions counts programs evicted for the budget since Open (each costs a compile at the
	// method's next call), Replaced those replaced by other code of their method, Closed those
	// closed (their last run ended).
	Evictions int64 `json:"evictions"`
	Replaced  int64 `json:"replaced"`
	Closed    int64 `json:"closed"`
}

// LivePrograms is how many compiled programs this forge keeps ready (a metrics gauge).
func (f *Forge) LivePrograms() int {
	f.programs.mu.Lock()
	defer f.programs.mu.Unlock()
	return len(f.programs.all)
}

// Live reports the live set (see LiveStats).
func (f *Forge) Live() LiveStats { return f.programs.stats() }

// newCompiled wraps a program fresh from Compile: the caller holds its only reference.
func newCompiled(art *registry.Artifact, prog sandbox.Program, sb sandbox.Sandbox, set *liveSet) *compiled {
	p := &compiled{art: art, prog: prog, sb: sb, set: set, idx: -1}
	if s, ok := prog.(sandbox.Sizer); ok {
		if !reflect.TypeOf(s).Comparable() {
			s = &ownSizer{s} // cannot key a map: counted for this entry alone
		}
		p.sizer = s
	}
	p.refs.Store(1)
	return p
}

// ownSizer is a program's Sizer that cannot key the live set's map (every backend's is a
// pointer, which can): it counts once per entry.
type ownSizer struct{ sandbox.Sizer }

// acquire takes a reference for a run; false when the program is already closed.
func (p *compiled) acquire() bool {
	for {
		r := p.refs.Load()
		if r <= 0 {
			return false
		}
		if p.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the program. A Close error is not the call's:
// the program is gone either way, and its backend reports its own failures.
func (p *compiled) release() {
	if p.refs.Add(-1) != 0 {
		return
	}
	_ = p.prog.Close()
	if p.set != nil {
		p.set.closes.Add(1)
	}
}

// program returns client's live program of an artifact snapshot with a reference for one run
// (release it when the run ends), compiling it on a miss. Concurrent misses of one code for one
// client compile once.
func (f *Forge) program(ctx context.Context, rt *roleRuntime, art *registry.Artifact, client string) (*compiled, error) {
	key := keyOf(art.Role, art.Method, client)
	for range 3 {
		if p := f.programs.get(key, art.CodeChecksum); p != nil {
			// Same code: a metrics flush or a reload replaced the snapshot, not the program.
			return p, nil
		}
		ch := f.compiles.DoChan(art.Role+"."+art.Method+"\x00"+art.CodeChecksum+"\x00"+client, func() (any, error) {
			if p := f.programs.get(key, art.CodeChecksum); p != nil {
				p.release() // compiled by a flight that just ended
				return nil, nil
			}
			p, err := f.compileArtifact(ctx, rt, art, client)
			if err != nil {
				return nil, err
			}
			f.programs.put(p)
			return nil, nil
		})
		select {
		case r := <-ch:
			if r.Err != nil {
				return nil, r.Err
			}
		case <-ctx.Done():
			return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Err: ctx.Err(),
				Message: "the call's context ended while its method's code was being compiled (the compile goes on for the next call); give the call more time"}
		}
	}
	// The program compiled for this call was evicted before the call could take it (a budget
	// far smaller than the methods called at once): compile one for this call alone.
	return f.compileArtifact(ctx, rt, art, client)
}

// compileArtifact compiles an artifact's code, detached from the caller's cancellation (a
// compile shared by concurrent callers must not fail because one of them gave up) but not from
// Close.
func (f *Forge) compileArtifact(ctx context.Context, rt *roleRuntime, art *registry.Artifact, client string) (*compiled, error) {
	sb, err := f.sandbox(rt.backend)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.generationTimeout())
	defer cancel()
	defer context.AfterFunc(f.bg, cancel)()
	prog, err := sb.Compile(cctx, sandbox.Source{Code: art.Code, Func: art.Method, Limits: rt.limits, Client: client})
	if err != nil {
		return nil, err
	}
	p := newCompiled(art, prog, sb, f.programs)
	p.client = client
	return p, nil
}

// warmState is what the warm calls of one live program derive from one artifact snapshot under
// one role runtime: the selector's decision (a pure function of the two and the forge's
// switches) and the artifact's event fields, with the store's pin of the snapshot, its metrics
// counters' handle and its event aggregate. A warm call that finds its snapshot and runtime here
// reads neither the artifact nor the store's, the recorder's or the aggregator's maps: it touches
// the live set's entry, the program, this state, the pinned snapshot and the two records it
// updates (RATIONALE, "The warm path touches memory only" and "One handle per warm call"). It is
// rebuilt, once, when either changes (a metrics flush replaces the snapshot). The fields the
// check and the counters read come first, on one cache line.
type warmState struct {
	art    *registry.Artifact
	rt     *roleRuntime
	pin    registry.Pin          // the store's snapshot art (zero: none; see Forge.call's warm path)
	rec    registry.RecordHandle // valid when hasRec (the recorder offers handles)
	hasRec bool

	archived bool
	gen      int
	agg      atomic.Pointer[aggBucket]

	action, reason, decision string
	ev                       artEvent
}

// artEvent is the part of a call's event that comes from its artifact.
type artEvent struct {
	promptVersion, fingerprint, trigger string
	success, failure                    int64
	intrinsic, adaptive, extrinsic      int64
}

func artEventOf(a *registry.Artifact) artEvent {
	ev := artEvent{promptVersion: a.PromptVersion, fingerprint: a.ContractFingerprint,
		success: a.SuccessCount, failure: a.FailureCount,
		intrinsic: a.IntrinsicFailureCount, adaptive: a.AdaptiveFailureCount, extrinsic: a.ExtrinsicFailureCount}
	if len(a.History) > 0 {
		ev.trigger = a.History[0].Trigger
	}
	return ev
}

// newWarmState records that art under rt was decided d (Execute).
func (f *Forge) newWarmState(art *registry.Artifact, rt *roleRuntime, d selector.Decision, decision string) *warmState {
	w := &warmState{art: art, rt: rt, action: string(d.Action), reason: string(d.Reason), decision: decision,
		gen: art.Generation, archived: art.Lifecycle == registry.Archived, ev: artEventOf(art)}
	if hr, ok := f.rec.(registry.HandleRecorder); ok {
		// Copied: the handle is one pointer, and a copy spares the call the handle's own line.
		w.rec, w.hasRec = *hr.Handle(art.Role, art.Method), true
	}
	return w
}
