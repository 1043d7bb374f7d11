package registry

import (
	"sync"
	"sync/atomic"
	"time"
)

// The revalidation sweep. A cached artifact or role must reflect another process's write within
// the revalidation interval (SetRevalidate). Checking a snapshot's file from Lookup (one stat per
// snapshot per interval) puts a system call on the warm path, and with many artifacts called
// round-robin every call pays it in turn. For intervals of at least minSweepInterval a timer
// checks every cached snapshot once per interval instead, off the calls' path, and Lookup and Role
// answer from memory with two atomic loads. The sweep stops when a whole interval passed with no
// Lookup (an idle store costs nothing); the next Lookup checks its snapshot on its own path, as
// shorter intervals always do, and starts the sweep again. See RATIONALE, "The warm path touches
// memory only".

// minSweepInterval is the shortest revalidation interval served by the sweep: below it a sweep of
// every cached snapshot would run too often, and Lookup checks the one it returns instead.
const minSweepInterval = 50 * time.Millisecond

// sweeper is the store's revalidation timer.
type sweeper struct {
	// on is true while a sweep is scheduled within the interval of every cached snapshot: Lookup
	// and Role then trust the cache without checking.
	on atomic.Bool
	// looked is set by the first Lookup after each sweep: a sweep that finds it clear stops.
	looked atomic.Bool

	mu    sync.Mutex
	gen   int64 // bumped by every start and stop: a stale timer's sweep does nothing
	timer *time.Timer

	sweeps atomic.Int64 // completed sweeps (tests, diagnostics)
}

// touch records a Lookup served while the sweep runs (one write per interval at most).
func (w *sweeper) touch() {
	if !w.looked.Load() {
		w.looked.Store(true)
	}
}

// startSweep schedules sweeps every revalidation interval, unless they run already or the
// interval is too short (or off).
func (s *Store) startSweep() {
	w := &s.sweep
	every := time.Duration(s.revalidate.Load())
	if every < minSweepInterval || w.on.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.on.Load() || s.closed.Load() {
		return
	}
	w.gen++
	gen := w.gen
	w.looked.Store(true)
	w.timer = time.AfterFunc(every, func() { s.runSweep(gen) })
	w.on.Store(true)
}

// stopSweep ends the sweeps: until the next startSweep, Lookup checks snapshots on its own path.
func (s *Store) stopSweep() {
	w := &s.sweep
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on.Store(false)
	w.gen++
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// runSweep compares every cached artifact and role with its file, drops those that changed or
// vanished, and schedules the next sweep while Lookups keep coming.
func (s *Store) runSweep(gen int64) {
	w := &s.sweep
	w.mu.Lock()
	if w.gen != gen {
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	looked := w.looked.Swap(false)
	s.revalidateAll()
	w.sweeps.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gen != gen {
		return
	}
	every := time.Duration(s.revalidate.Load())
	if !looked || every < minSweepInterval || s.closed.Load() {
		// Idle, or the interval changed under the sweep's floor: Lookup checks inline from now.
		w.on.Store(false)
		w.gen++
		w.timer = nil
		return
	}
	w.timer = time.AfterFunc(every, func() { s.runSweep(gen) })
}

// revalidateAll stats every cached artifact and role file once; a snapshot whose file changed
// or vanished is dropped (the next call Loads the new version), the others are marked checked.
func (s *Store) revalidateAll() {
	type art struct {
		k  Key
		sn *snapshot
	}
	type role struct {
		name string
		sn   *roleSnap
	}
	s.mu.RLock()
	arts := make([]art, 0, len(s.artifacts))
	for k, sn := range s.artifacts {
		arts = append(arts, art{k, sn})
	}
	roles := make([]role, 0, len(s.roles))
	for n, sn := range s.roles {
		roles = append(roles, role{n, sn})
	}
	s.mu.RUnlock()
	var staleArts []art
	var staleRoles []role
	for _, a := range arts {
		now := time.Now().UnixNano()
		if st, err := stampOf(s.ArtifactPath(a.k.Role, a.k.Method)); err != nil || st != a.sn.stamp {
			staleArts = append(staleArts, a)
			continue
		}
		a.sn.checked.Store(now)
	}
	for _, r := range roles {
		now := time.Now().UnixNano()
		if st, err := stampOf(s.rolePath(r.name)); err != nil || st != r.sn.stamp {
			staleRoles = append(staleRoles, r)
			continue
		}
		r.sn.checked.Store(now)
	}
	if len(staleArts) == 0 && len(staleRoles) == 0 {
		return
	}
	s.mu.Lock()
	for _, a := range staleArts {
		if s.artifacts[a.k] == a.sn {
			s.deleteLocked(a.k)
		}
	}
	for _, r := range staleRoles {
		if s.roles[r.name] == r.sn {
			delete(s.roles, r.name)
		}
	}
	s.mu.Unlock()
}
