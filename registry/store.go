package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// ErrNotFound is returned for a role or artifact the store does not have.
var ErrNotFound = errors.New("not found")

// Key names one method artifact.
type Key struct{ Role, Method string }

func (k Key) String() string { return k.Role + "." + k.Method }

// RoleRecord is a role's contract as stored in roles/<role>.json, with its times.
type RoleRecord struct {
	Contract
	Fingerprint string     `json:"contract_fingerprint"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"`
	UsageCount  int64      `json:"usage_count"`
	// MetricsApplied stamps the metrics journal records whose calls UsageCount holds (journal.go).
	MetricsApplied map[string]int64 `json:"metrics_applied,omitempty"`
	// DefinedBy is the client that last changed the contract (Contract.By; "" when none was
	// named): whose role it is when another client asks to redefine it.
	DefinedBy string `json:"defined_by,omitempty"`
	// AgentDefined: an agent wrote the contract (Contract.ByAgent), not an operator; its purpose
	// is a caller's text and never reaches another role's prompt.
	AgentDefined bool `json:"agent_defined,omitempty"`
}

// Store is one store root on disk. It is safe for concurrent use by goroutines and processes.
// Artifacts and roles it returns are shared snapshots: callers must not modify them.
type Store struct {
	root string

	mu         sync.RWMutex
	roles      map[string]*roleSnap
	artifacts  map[Key]*snapshot
	maxCached  atomic.Int64 // see SetCacheLimit
	revalidate atomic.Int64 // nanoseconds; see SetRevalidate
	sweep      sweeper      // revalidates the cache off the calls' path (sweep.go)
	closed     atomic.Bool

	// om guards ov, the journal records not yet folded into the files, and orders the snapshot
	// changes made from it (a Load's merge, a flush's advance).
	om        sync.Mutex
	ov        *overlay
	refreshMu sync.Mutex // one refreshOverlay at a time

	// OnQuarantine, if set, is told about every file the store moves to quarantine.
	OnQuarantine func(QuarantineReport)
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// OnQuarantine is set as the store's OnQuarantine before anything is read, so that damage found
	// while opening (a migration, a role file) is reported too.
	OnQuarantine func(QuarantineReport)
	// MustExist refuses a root that does not exist instead of creating it (read-only commands).
	MustExist bool
	// MaxCached bounds the artifacts kept in memory (DefaultMaxCached if 0; negative: no bound).
	MaxCached int
	// LocalDir is, for a backend whose store is not a directory (OpenBackend with a URL), the
	// directory on this machine for its unshared state (Backend.LocalDir). Empty: the backend's
	// default. A directory store ignores it.
	LocalDir string
	// ClientName names this process to a networked backend's servers (e.g. "forge serve").
	ClientName string
}

// Open opens (creating if needed) the store at root, migrating an older store's registry.json.
func Open(root string) (*Store, error) { return OpenWith(root, OpenOptions{}) }

// ErrNoStore is returned by OpenWith with MustExist for a store directory that does not exist.
var ErrNoStore = errors.New("no store")

// OpenWith opens the store at root. Damage found on the way is quarantined, recorded under
// quarantine/ (see Quarantined) and reported to o.OnQuarantine.
func OpenWith(root string, o OpenOptions) (*Store, error) {
	if root == "" {
		return nil, errors.New("registry: empty store path: pass --store DIR or set $FORGE_STORE")
	}
	if o.MustExist {
		fi, err := os.Stat(root)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("registry: %s: %w there (nothing was created); check --store or $FORGE_STORE, or create one with `forge role add`", root, ErrNoStore)
		}
		if err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("registry: %s is a file, not a store directory; check --store or $FORGE_STORE", root)
		}
	}
	for _, d := range []string{root, filepath.Join(root, "tools"), filepath.Join(root, rolesDir), filepath.Join(root, quarantineDir)} {
		if err := storepath.MkdirAll(root, d, 0o755); err != nil {
			return nil, fmt.Errorf("registry: create store %s: %w (check the path and its permissions)", root, writeErr(root, err))
		}
	}
	if err := checkStoreDirs(root); err != nil {
		return nil, err
	}
	s := &Store{root: root, artifacts: make(map[Key]*snapshot), roles: make(map[string]*roleSnap), OnQuarantine: o.OnQuarantine, ov: newOverlay()}
	s.revalidate.Store(int64(DefaultRevalidate))
	s.maxCached.Store(int64(DefaultMaxCached))
	if o.MaxCached != 0 {
		s.maxCached.Store(int64(o.MaxCached))
	}
	if err := s.openLayout(); err != nil {
		return nil, err
	}
	return s, nil
}

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

// ArtifactPath is where role.method's artifact is stored.
func (s *Store) ArtifactPath(role, method string) string {
	return filepath.Join(s.root, "tools", role, method+".json")
}

func (s *Store) artifactLock(role, method string) string {
	return filepath.Join(s.root, "tools", role, method+".lock")
}

// Lookup returns the artifact this process last loaded or wrote for role.method, from memory. It
// is the warm path: no allocation and, while the revalidation sweep runs (sweep.go: intervals of
// at least minSweepInterval, the default included), no system call either: the sweep compares the
// cached snapshots with their files once per interval and drops those another process changed, so
// Lookup reports false for them and the caller Loads the new version. With a shorter interval, or
// on the first Lookup after an idle interval, Lookup compares the snapshot with its file itself
// when it is due (one stat) and starts the sweep.
func (s *Store) Lookup(role, method string) (*Artifact, bool) {
	k := Key{role, method}
	s.mu.RLock()
	sn := s.artifacts[k]
	s.mu.RUnlock()
	if sn == nil {
		return nil, false
	}
	return s.lookupSnap(k, sn)
}

// LookupPin is Lookup that also returns a pin of the snapshot it answered with (PinLookup).
func (s *Store) LookupPin(role, method string) (*Artifact, Pin, bool) {
	k := Key{role, method}
	s.mu.RLock()
	sn := s.artifacts[k]
	s.mu.RUnlock()
	if sn == nil {
		return nil, Pin{}, false
	}
	a, ok := s.lookupSnap(k, sn)
	if !ok {
		return nil, Pin{}, false
	}
	return a, Pin{sn: sn}, true
}

// Relookup answers what Lookup of the pinned key would, without the map lookup, while the pinned
// snapshot is still the cached one (PinLookup). False: it is not (or never was); call Lookup.
func (s *Store) Relookup(p Pin) (*Artifact, bool) {
	sn := p.sn
	if sn == nil || sn.gone.Load() {
		return nil, false
	}
	return s.lookupSnap(Key{}, sn) // the key is read from the artifact only if a check is due
}

// lookupSnap is Lookup once the cached snapshot sn of k is found (a zero k: sn's artifact's key).
func (s *Store) lookupSnap(k Key, sn *snapshot) (*Artifact, bool) {
	if !sn.used.Load() {
		sn.used.Store(true)
	}
	if s.sweep.on.Load() {
		s.sweep.touch()
		return sn.a, true
	}
	if now, due := s.due(&sn.checked); due {
		if k.Role == "" {
			k = Key{sn.a.Role, sn.a.Method}
		}
		if st, err := stampOf(s.ArtifactPath(k.Role, k.Method)); err != nil || st != sn.stamp {
			s.mu.Lock()
			if s.artifacts[k] == sn {
				s.deleteLocked(k)
			}
			s.mu.Unlock()
			return nil, false
		}
		sn.checked.Store(now)
	}
	s.startSweep()
	return sn.a, true
}

// Load reads role.method's artifact from disk, merges the call outcomes the metrics journals hold
// for it, and caches it. A missing artifact is ErrNotFound; a damaged one is quarantined and
// reported as ErrCorrupt (the caller may then regenerate); one with another schema version is left
// in place and reported as ErrIncompatible.
func (s *Store) Load(role, method string) (*Artifact, error) {
	if err := validateKey(role, method); err != nil {
		return nil, err
	}
	if _, err := s.refreshOverlay(); err != nil {
		return nil, err
	}
	return s.load(role, method)
}

// load is Load without reading the journals first (the caller just did).
func (s *Store) load(role, method string) (*Artifact, error) {
	st, _ := stampOf(s.ArtifactPath(role, method)) // before the read: a newer file is then seen as changed
	a, err := s.readArtifact(role, method)
	if errors.Is(err, ErrCorrupt) {
		// Confirm under the lock, then quarantine: a writer may have replaced the file meanwhile.
		err = s.withLock(s.artifactLock(role, method), func() error {
			var lerr error
			a, lerr = s.readArtifact(role, method)
			if errors.Is(lerr, ErrCorrupt) {
				return &QuarantinedError{Report: s.quarantine(s.ArtifactPath(role, method), lerr, "", nil), Err: lerr}
			}
			return lerr
		})
	}
	if errors.Is(err, ErrIncompatible) {
		return a, err // readable, for the selector and operators; never cached
	}
	if err != nil {
		return nil, err
	}
	k := Key{role, method}
	s.om.Lock()
	m := mergeArtifact(a, s.ov.byKey[k])
	s.install(k, m, a.Lifecycle, st)
	s.om.Unlock()
	return m, nil
}

// Peek reads role.method's artifact as Load does (file and metrics journals) without caching it
// or quarantining anything: a look that leaves the store's snapshots alone (the demo, tools).
func (s *Store) Peek(role, method string) (*Artifact, error) {
	if err := validateKey(role, method); err != nil {
		return nil, err
	}
	if _, err := s.refreshOverlay(); err != nil {
		return nil, err
	}
	a, err := s.readArtifact(role, method)
	if err != nil {
		return a, err
	}
	s.om.Lock()
	defer s.om.Unlock()
	return mergeArtifact(a, s.ov.byKey[Key{role, method}]), nil
}

// install caches a snapshot (the caller holds om) and keeps the cache within its bound.
func (s *Store) install(k Key, a *Artifact, base Lifecycle, st fileStamp) {
	sn := newSnapshot(a, st)
	sn.base = base
	s.mu.Lock()
	s.setLocked(k, sn)
	if max := s.maxCached.Load(); max > 0 && int64(len(s.artifacts)) > max {
		s.evictLocked(max)
	}
	s.mu.Unlock()
}

func validateKey(role, method string) error {
	if err := ValidateName("role", role); err != nil {
		return err
	}
	return ValidateName("method", method)
}

func (s *Store) readArtifact(role, method string) (*Artifact, error) {
	path := s.ArtifactPath(role, method)
	data, err := readStoreFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("registry: artifact %s.%s: %w", role, method, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: read %s: %w", path, err)
	}
	a, err := DecodeArtifact(data)
	if err == nil && (a.Role != role || a.Method != method) {
		err = fmt.Errorf("%w: file names %s.%s", ErrCorrupt, a.Role, a.Method)
	}
	if err != nil {
		return a, fmt.Errorf("registry: artifact %s.%s (%s): %w", role, method, path, err)
	}
	return a, nil
}

// Update is the locked read-modify-write of one artifact: fn gets the current artifact read fresh
// from disk with the metrics journals' records merged in (a new, empty one with exists=false if
// there is none, or if the stored one was damaged and has just been quarantined) and changes it in
// place; the result is written durably (stamped with the journal records it now holds, see
// journal.go), indexed and cached. If fn returns an error nothing is written.
func (s *Store) Update(role, method string, fn func(a *Artifact, exists bool) error) (*Artifact, error) {
	_, m, _, err := s.update(role, method, nil, nil, true, fn)
	return m, err
}

// update is Update that also folds extra journal records (a compaction's); present, if not nil,
// names the journals that exist, listed under this artifact's lock (nil: listed here, the safe
// choice — a stamp is dropped for a journal missing from the list); index is false when the caller
// writes the index entries itself (from the returned file stamp). It returns what was written,
// the merged view (with records flushed meanwhile), and the file's stamp.
func (s *Store) update(role, method string, extra []ovRec, present map[string]bool, index bool, fn func(a *Artifact, exists bool) error) (file, merged *Artifact, st fileStamp, err error) {
	if err := validateKey(role, method); err != nil {
		return nil, nil, fileStamp{}, err
	}
	if err := s.mkdirAll(filepath.Join(s.root, "tools", role), 0o755); err != nil {
		return nil, nil, fileStamp{}, fmt.Errorf("registry: %w", writeErr(s.root, err))
	}
	k := Key{role, method}
	var out *Artifact
	var outStamp fileStamp
	err = s.withLock(s.artifactLock(role, method), func() error {
		if present == nil {
			var err error
			if present, err = s.refreshOverlay(); err != nil {
				return err
			}
		}
		a, err := s.readArtifact(role, method)
		exists := true
		switch {
		case errors.Is(err, ErrNotFound):
			a, exists, err = nil, false, nil
		case errors.Is(err, ErrCorrupt):
			s.quarantine(s.ArtifactPath(role, method), err, "", nil)
			a, exists, err = nil, false, nil
		}
		if err != nil {
			return err
		}
		s.om.Lock()
		recs := unionRecs(s.ov.byKey[k], extra)
		s.om.Unlock()
		if a == nil {
			a = &Artifact{SchemaVersion: SchemaVersion, Role: role, Method: method, Lifecycle: Candidate,
				RuntimeVersion: RuntimeVersion, CodeChecksum: Checksum("")}
			// Outcomes of an artifact that is gone are not carried over to a new one.
			a.MetricsApplied = foldStamps(nil, recs, present)
		} else {
			p := pendingFor(recs, a.MetricsApplied)
			for i := range p {
				p[i].d.applyTo(a, p[i].at)
			}
			a.MetricsApplied = foldStamps(a.MetricsApplied, p, present)
		}
		if err := fn(a, exists); err != nil {
			return err
		}
		if a.Role != role || a.Method != method {
			return fmt.Errorf("registry: update %s.%s: the update renamed the artifact", role, method)
		}
		if a.CodeChecksum != Checksum(a.Code) {
			return fmt.Errorf("registry: update %s.%s: code changed without Promote (checksum mismatch)", role, method)
		}
		data, err := a.Encode()
		if err != nil {
			return err
		}
		if err := s.writeFile(s.ArtifactPath(role, method), data); err != nil {
			return fmt.Errorf("registry: write %s: %w", s.ArtifactPath(role, method), writeErr(s.root, err))
		}
		out = a
		outStamp, _ = stampOf(s.ArtifactPath(role, method)) // under the lock: this very version
		if index {
			s.indexPut(a, outStamp)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fileStamp{}, err
	}
	s.om.Lock()
	m := mergeArtifact(out, s.ov.byKey[k]) // records flushed while it was written
	s.install(k, m, out.Lifecycle, outStamp)
	s.om.Unlock()
	return out, m, outStamp, nil
}

// List returns the keys of every stored artifact, sorted, from directory names only (no file is
// read: loading is lazy, per artifact).
func (s *Store) List() ([]Key, error) {
	toolsDir := filepath.Join(s.root, "tools")
	roles, err := os.ReadDir(toolsDir)
	if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", toolsDir, err)
	}
	var keys []Key
	for _, r := range roles {
		if !r.IsDir() || ValidateName("role", r.Name()) != nil {
			continue
		}
		files, err := os.ReadDir(filepath.Join(toolsDir, r.Name()))
		if err != nil {
			return nil, fmt.Errorf("registry: list %s: %w", r.Name(), err)
		}
		for _, f := range files {
			m, ok := strings.CutSuffix(f.Name(), ".json")
			if !ok || f.IsDir() || ValidateName("method", m) != nil {
				continue
			}
			keys = append(keys, Key{r.Name(), m})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Role != keys[j].Role {
			return keys[i].Role < keys[j].Role
		}
		return keys[i].Method < keys[j].Method
	})
	return keys, nil
}

// LoadAll loads the given artifacts into memory with a few parallel readers. Damaged files are
// quarantined and skipped (reported through OnQuarantine); it fails only on I/O errors.
func (s *Store) LoadAll(keys []Key) error {
	if _, err := s.refreshOverlay(); err != nil {
		return err
	}
	const readers = 4
	var wg sync.WaitGroup
	errs := make([]error, readers)
	for w := 0; w < readers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(keys); i += readers {
				_, err := s.load(keys[i].Role, keys[i].Method)
				if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrIncompatible) {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// WithGenerationLock runs fn holding role.method's generation lock (tools/<role>/<method>.gen.lock),
// a second cross-process lock apart from the write lock: it is held for a whole generation
// (provider call, verification, Update), so concurrent processes that find the same method missing
// produce it once; Update, which takes the write lock, may be called inside fn.
func (s *Store) WithGenerationLock(role, method string, fn func() error) error {
	if err := validateKey(role, method); err != nil {
		return err
	}
	if err := s.mkdirAll(filepath.Join(s.root, "tools", role), 0o755); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return s.withLock(filepath.Join(s.root, "tools", role, method+".gen.lock"), fn)
}

// Each loads every stored artifact in key order and calls fn with it, or with the error that kept
// it from loading (damaged files are quarantined as Load does); artifacts that vanish between the
// listing and the load are skipped. fn's error stops the walk.
func (s *Store) Each(fn func(k Key, a *Artifact, err error) error) error {
	keys, err := s.List()
	if err != nil {
		return err
	}
	if _, err := s.refreshOverlay(); err != nil {
		return err
	}
	for _, k := range keys {
		a, err := s.load(k.Role, k.Method)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err := fn(k, a, err); err != nil {
			return err
		}
	}
	return nil
}
