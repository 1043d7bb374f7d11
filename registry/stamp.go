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
	a       *Artifact
	stamp   fileStamp
	checked atomic.Int64 // unix nanos of the last comparison with the file
}

func newSnapshot(a *Artifact, st fileStamp) *snapshot {
	sn := &snapshot{a: a, stamp: st}
	sn.checked.Store(time.Now().UnixNano())
	return sn
}

// SetRevalidate changes how often cached files are checked (DefaultRevalidate; 0 or less: never,
// for a process that is the store's only writer).
func (s *Store) SetRevalidate(d time.Duration) { s.revalidate.Store(int64(d)) }

// due reports whether a snapshot checked at checked must be compared with its file again now.
func (s *Store) due(checked *atomic.Int64) (now int64, ok bool) {
	every := s.revalidate.Load()
	if every <= 0 {
		return 0, false
	}
	now = time.Now().UnixNano()
	return now, now-checked.Load() >= every
}
