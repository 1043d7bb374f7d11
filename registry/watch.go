package registry

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch mode. A running process watches its store's directories (root, roles/, tools/ and every
// tools/<role>/) with fsnotify; a change another process makes (a bless, quarantine, rollback, an
// edited generation, a new contract) drops the cached snapshot at once, so the next call reads the
// new file instead of waiting for the revalidation poll, which stays as the fallback (no fsnotify,
// an overflowed queue). Every store write is a rename of a complete temp file onto its final name,
// so a path event is acted on only for final names (temp files are ignored) and the file is read
// lazily by the next call: nothing ever reads a half-written file. Bursts are debounced: events are
// collected until the store has been quiet for WatchDebounce (at most WatchMaxDelay after the
// first), then applied at once.

// Watch tuning.
const (
	WatchDebounce = 5 * time.Millisecond
	WatchMaxDelay = 40 * time.Millisecond
	// watchRescan is how often a watcher that lost a directory (removed, recreated) retries it.
	watchRescan = 50 * time.Millisecond
)

// ChangeKind says what a Change is about.
type ChangeKind string

// Change kinds.
const (
	ChangeRole     ChangeKind = "role"     // roles/<Role>.json changed, appeared or vanished
	ChangeArtifact ChangeKind = "artifact" // tools/<Role>/<Method>.json changed, appeared or vanished
	ChangeAll      ChangeKind = "all"      // anything may have changed (overflow, a directory recreated)
)

// Change is one store change seen by a Watcher, after its cache entry was dropped.
type Change struct {
	Kind   ChangeKind `json:"kind"`
	Role   string     `json:"role,omitempty"`
	Method string     `json:"method,omitempty"`
}

// Watcher watches a store for changes made by other processes. Close it to stop.
type Watcher struct {
	s        *Store
	w        *fsnotify.Watcher
	onChange func([]Change)
	done     chan struct{}
	stopped  chan struct{}
	once     sync.Once

	mu      sync.Mutex
	watched map[string]bool // directories currently watched
}

// Watch starts watching the store. onChange (may be nil) is called from the watcher's goroutine
// with every debounced batch of changes, after their cached snapshots were dropped; it must not
// block for long. If fsnotify is unavailable, Watch returns the error and the store keeps its
// revalidation poll.
func (s *Store) Watch(onChange func([]Change)) (io.Closer, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("registry: watch %s: %w (changes by other processes are seen through the %v poll)", s.root, err, DefaultRevalidate)
	}
	w := &Watcher{s: s, w: fw, onChange: onChange, done: make(chan struct{}), stopped: make(chan struct{}), watched: map[string]bool{}}
	lost := w.addAll() // a directory missing now is retried until it is back
	go w.loop(lost)
	return w, nil
}

// Close stops watching.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.w.Close()
		<-w.stopped
	})
	return err
}

// addAll (re)adds every directory of the store; it reports whether one could not be added.
func (w *Watcher) addAll() (missing bool) {
	dirs := []string{w.s.root, w.s.rolesPath(), filepath.Join(w.s.root, "tools")}
	if ents, err := os.ReadDir(filepath.Join(w.s.root, "tools")); err == nil {
		for _, e := range ents {
			if e.IsDir() && ValidateName("role", e.Name()) == nil {
				dirs = append(dirs, filepath.Join(w.s.root, "tools", e.Name()))
			}
		}
	}
	for _, d := range dirs {
		if !w.add(d) {
			missing = true
		}
	}
	return missing
}

func (w *Watcher) add(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		return true
	}
	if err := w.w.Add(dir); err != nil {
		return false
	}
	w.watched[dir] = true
	return true
}

func (w *Watcher) forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The directory and everything watched under it: a moved directory takes its subdirectories'
	// watches with it, and a new one at the same path must be watched afresh.
	for d := range w.watched {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			delete(w.watched, d)
			_ = w.w.Remove(d)
		}
	}
}

func (w *Watcher) loop(lost bool) {
	defer close(w.stopped)
	pending := map[Change]bool{}
	var first time.Time
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	rescan := time.NewTicker(watchRescan)
	defer rescan.Stop()
	flush := func() {
		if len(pending) == 0 {
			return
		}
		batch := make([]Change, 0, len(pending))
		if pending[Change{Kind: ChangeAll}] {
			w.s.invalidateAll()
			batch = append(batch, Change{Kind: ChangeAll})
		} else {
			for c := range pending {
				w.s.invalidate(c)
				batch = append(batch, c) // this process's own writes too: listeners want every change
			}
		}
		clear(pending)
		if len(batch) > 0 && w.onChange != nil {
			w.onChange(batch)
		}
	}
	note := func(c Change) {
		if len(pending) == 0 {
			first = time.Now()
		}
		pending[c] = true
		if d := time.Since(first); d >= WatchMaxDelay {
			flush()
			return
		}
		quiet.Reset(WatchDebounce)
	}
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			c, dir, gone := w.classify(ev)
			if dir != "" {
				if gone {
					w.forget(dir)
					lost = true
				} else if w.add(dir) {
					// A directory appeared (a new role's tools/<role>/, or a recreated one): files
					// may have landed in it before the watch was in place.
					if role, ok := w.roleDir(dir); ok {
						if ents, err := os.ReadDir(dir); err == nil {
							for _, e := range ents {
								if m, ok := strings.CutSuffix(e.Name(), ".json"); ok && ValidateName("method", m) == nil {
									note(Change{Kind: ChangeArtifact, Role: role, Method: m})
								}
							}
						}
					} else {
						lost = w.addAll()
						note(Change{Kind: ChangeAll})
					}
				}
				continue
			}
			if c.Kind != "" {
				note(c)
			}
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				note(Change{Kind: ChangeAll})
			}
		case <-quiet.C:
			flush()
		case <-rescan.C:
			if lost {
				if !w.addAll() {
					lost = false
					note(Change{Kind: ChangeAll})
				}
			}
			if len(pending) > 0 && time.Since(first) >= WatchDebounce {
				flush()
			}
		}
	}
}

// roleDir reports whether dir is a tools/<role>/ directory, and its role.
func (w *Watcher) roleDir(dir string) (string, bool) {
	if filepath.Dir(dir) != filepath.Join(w.s.root, "tools") {
		return "", false
	}
	return filepath.Base(dir), true
}

// classify maps a filesystem event to a change, or to a directory to (un)watch.
func (w *Watcher) classify(ev fsnotify.Event) (c Change, dir string, gone bool) {
	rel, err := filepath.Rel(w.s.root, ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		// The root itself (removed or renamed): watch it again when it is back.
		return Change{}, ev.Name, ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	base := parts[len(parts)-1]
	if strings.HasPrefix(base, tempPrefix) || strings.HasPrefix(base, ".") {
		return Change{}, "", false // a writer's temp file: its rename onto the final name is the event
	}
	removed := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	switch {
	case rel == ".":
		return Change{}, w.s.root, removed
	case len(parts) == 1 && (parts[0] == "tools" || parts[0] == rolesDir):
		if removed || ev.Has(fsnotify.Create) {
			return Change{}, ev.Name, removed
		}
	case len(parts) == 2 && parts[0] == "tools":
		if ValidateName("role", parts[1]) == nil && (removed || ev.Has(fsnotify.Create)) {
			if fi, err := os.Stat(ev.Name); (err == nil && fi.IsDir()) || removed {
				return Change{}, ev.Name, removed
			}
		}
	case len(parts) == 2 && parts[0] == rolesDir:
		name := strings.TrimSuffix(base, goodSuffix)
		if name, ok := strings.CutSuffix(name, ".json"); ok && ValidateName("role", name) == nil {
			return Change{Kind: ChangeRole, Role: name}, "", false
		}
	case len(parts) == 3 && parts[0] == "tools":
		if m, ok := strings.CutSuffix(base, ".json"); ok && ValidateName("role", parts[1]) == nil && ValidateName("method", m) == nil {
			return Change{Kind: ChangeArtifact, Role: parts[1], Method: m}, "", false
		}
	}
	return Change{}, "", false
}

// invalidate drops the cached snapshot c names if its file is no longer the version cached (this
// process's own writes keep their snapshot). It reports whether the change is news: the file
// differs from what this process last read or wrote (or it never read it).
func (s *Store) invalidate(c Change) bool {
	switch c.Kind {
	case ChangeArtifact:
		k := Key{c.Role, c.Method}
		s.mu.RLock()
		sn := s.artifacts[k]
		s.mu.RUnlock()
		if sn == nil {
			return true
		}
		if st, err := stampOf(s.ArtifactPath(c.Role, c.Method)); err == nil && st == sn.stamp {
			return false
		}
		s.mu.Lock()
		if s.artifacts[k] == sn {
			s.deleteLocked(k)
		}
		s.mu.Unlock()
		return true
	case ChangeRole:
		s.mu.RLock()
		sn := s.roles[c.Role]
		s.mu.RUnlock()
		if sn == nil {
			return true
		}
		if st, err := stampOf(s.rolePath(c.Role)); err == nil && st == sn.stamp {
			return false
		}
		s.mu.Lock()
		if s.roles[c.Role] == sn {
			delete(s.roles, c.Role)
		}
		s.mu.Unlock()
		return true
	}
	s.invalidateAll()
	return true
}

// invalidateAll drops every cached snapshot (after an overflow or a recreated directory).
func (s *Store) invalidateAll() {
	s.mu.Lock()
	for _, sn := range s.artifacts {
		sn.gone.Store(true)
	}
	clear(s.artifacts)
	clear(s.roles)
	s.mu.Unlock()
}
