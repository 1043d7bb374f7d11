package registry

import (
	"os"
	"sync/atomic"
	"time"
)

// DefaultRevalidate is how often a cached artifact or the cached role registry is checked against
// its file, so that writes by other processes (an operator's quarantine, a new contract) reach a
// running forge within this interval without a system call on every call.
const DefaultRevalidate = time.Second

// fileStamp identifies one version of a file: every durable write replaces the file by rename, so
// a new version has a new inode (and, in practice, a new mtime).
type fileStamp struct {
	ino   uint64
	mtime int64
	size  int64
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{ino: inode(fi), mtime: fi.ModTime().UnixNano(), size: fi.Size()}, nil
}

// snapshot is a cached artifact with the stamp of the file it was read from.
type snapshot struct {
	a       *Artifact // the file merged with the journals' records
	base    Lifecycle // the lifecycle in the file (a flush writes a promotion the merge made)
	stamp   fileStamp
	checked atomic.Int64 // unix nanos of the last comparison with the file
	used    atomic.Bool  // looked up since the last eviction sweep
	// gone is set when the snapshot leaves the cache (replaced, revalidated away, evicted,
	// invalidated), under mu: a Pin of it then answers false (Relookup).
	gone atomic.Bool
}

// setLocked makes sn the cached snapshot of k (the caller holds mu for writing).
func (s *Store) setLocked(k Key, sn *snapshot) {
	if old := s.artifacts[k]; old != nil && old != sn {
		old.gone.Store(true)
	}
	s.artifacts[k] = sn
}

// deleteLocked drops k's cached snapshot (the caller holds mu for writing).
func (s *Store) deleteLocked(k Key) {
	if old := s.artifacts[k]; old != nil {
		old.gone.Store(true)
		delete(s.artifacts, k)
	}
}

func newSnapshot(a *Artifact, st fileStamp) *snapshot {
	sn := &snapshot{a: a, stamp: st}
	sn.checked.Store(time.Now().UnixNano())
	return sn
}

// SetRevalidate changes how often cached files are checked (DefaultRevalidate; 0 or less: never,
// for a process that is the store's only writer). It applies at once: a running sweep stops, and
// the next Lookup checks its snapshot against the new interval (and starts the sweep again).
func (s *Store) SetRevalidate(d time.Duration) {
	s.revalidate.Store(int64(d))
	s.stopSweep()
}

// due reports whether a snapshot checked at checked must be compared with its file again now.
func (s *Store) due(checked *atomic.Int64) (now int64, ok bool) {
	every := s.revalidate.Load()
	if every <= 0 {
		return 0, false
	}
	now = time.Now().UnixNano()
	return now, now-checked.Load() >= every
}

// DefaultMaxCached is how many artifacts a store keeps in memory by default. A cached artifact
// holds its code and kept generations; one that falls out is read again (a file read and a
// checksum) on its next use. Forge's live-program set holds the artifacts it runs on its own.
const DefaultMaxCached = 4096

// SetCacheLimit changes how many artifacts the store keeps in memory (0 or less: no bound).
func (s *Store) SetCacheLimit(n int) {
	s.maxCached.Store(int64(n))
	if n > 0 {
		s.mu.Lock()
		if len(s.artifacts) > n {
			s.evictLocked(int64(n))
		}
		s.mu.Unlock()
	}
}

// Cached is how many artifacts the store holds in memory.
func (s *Store) Cached() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.artifacts)
}

// evictLocked brings the cache down to 7/8 of max (the caller holds mu): a clock sweep drops
// snapshots not looked up since the last sweep and clears the mark of the others; a second pass
// drops in map order if everything was in use.
func (s *Store) evictLocked(max int64) {
	target := max - max/8
	for pass := 0; pass < 2 && int64(len(s.artifacts)) > target; pass++ {
		for k, sn := range s.artifacts {
			if int64(len(s.artifacts)) <= target {
				return
			}
			if pass == 0 && sn.used.Load() {
				sn.used.Store(false)
				continue
			}
			sn.gone.Store(true)
			delete(s.artifacts, k)
		}
	}
}
