package registry

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/artifactforge/forge/internal/redact"
)

// Backend is what the forge, the CLI, the server and watch mode need from a store. Two backends
// implement it: *Store (a directory on one machine, this package) and the fleet store on NATS
// JetStream key-value buckets (package registry/nats, which registers the "nats" scheme). Code
// above the registry holds a Backend and never knows which one it has; what only one backend can
// do (a directory's quarantine, compaction) is reached through the optional interfaces below.
//
// Every method is safe for concurrent use. Load, Update, Role and Summaries return counters
// merged with every flushed call outcome; Lookup is the warm path's read and must answer from
// memory (no I/O, no network round trip).
type Backend interface {
	// Location names the store in messages: a directory, or a URL with its secrets redacted.
	Location() string
	// LocalDir is a directory on this machine for what is not shared with other machines: the
	// event log, compiled-code caches, the token calibration. For a directory store it is the
	// store's directory.
	LocalDir() string

	// Lookup returns the cached artifact role.method without any I/O (ok false: not cached, or
	// the cache may be stale; call Load).
	Lookup(role, method string) (*Artifact, bool)
	// Load returns role.method (ErrNotFound when there is none).
	Load(role, method string) (*Artifact, error)
	// Peek reads role.method without caching it or repairing anything (diagnostics).
	Peek(role, method string) (*Artifact, error)
	// Update is a read-modify-write of role.method that no concurrent writer, in this process or
	// another, can interleave with; fn may return an error to abort (nothing is written). fn may
	// run more than once (the fleet store runs it again after losing a compare-and-set), so it
	// must change only a and whatever it resets on each run.
	Update(role, method string, fn func(a *Artifact, exists bool) error) (*Artifact, error)
	// List returns every artifact's key.
	List() ([]Key, error)
	// Each calls fn with every artifact (or the error reading it), in key order.
	Each(fn func(k Key, a *Artifact, err error) error) error
	// Summaries lists every artifact's summary (what `forge ls` shows), in key order.
	Summaries() ([]Summary, error)

	// Role returns a role's record (ErrNotFound when there is none).
	Role(name string) (*RoleRecord, error)
	// Roles returns every role, by name.
	Roles() ([]*RoleRecord, error)
	// PutRole adds or replaces a role's contract.
	PutRole(c Contract, now time.Time) (RoleRecord, error)
	// PutRoleReport is PutRole that also returns the record it replaced (nil when new).
	PutRoleReport(c Contract, now time.Time) (RoleRecord, *RoleRecord, error)

	// WithGenerationLock runs fn while no other process or machine holds role.method's
	// generation lock, so that a method is generated once however many callers miss at once.
	WithGenerationLock(role, method string, fn func() error) error
	// Watch calls onChange with batches of changes written by any process (the caller's own
	// writes included); a ChangeAll means anything may have changed.
	Watch(onChange func([]Change)) (io.Closer, error)
	// SetRevalidate sets how often cached entries are checked against the store when no watch
	// is running (negative: on every Load).
	SetRevalidate(d time.Duration)
	// NewRecorder starts the buffer of per-call outcomes that is flushed into the store every
	// interval (DefaultFlushInterval if 0).
	NewRecorder(interval time.Duration) MetricsRecorder
	// Knowledge is where the learner keeps its domain documents; nil means the directory
	// LocalDir()/knowledge (the learner's own file format and locks).
	Knowledge() Docs
	// Close releases the store's connections and watches. Using the store afterwards is an error.
	Close() error
}

// PinLookup is what a backend whose Lookup reads a per-key cache entry offers the warm path
// (*Store does): the snapshot Lookup answered with, pinned, so that the next call of the same
// method checks that snapshot directly instead of finding it again in the cache's map. Relookup
// must answer exactly what Lookup would for the pinned key, or false (then the caller calls
// Lookup): a pin says nothing once its snapshot has left the cache.
type PinLookup interface {
	LookupPin(role, method string) (*Artifact, Pin, bool)
	Relookup(p Pin) (*Artifact, bool)
}

// Pin is a cached snapshot as LookupPin found it (the zero Pin pins nothing).
type Pin struct{ sn *snapshot }

// MetricsRecorder buffers call outcomes in memory and flushes them into the store.
type MetricsRecorder interface {
	// Record adds one call's outcome; it does no I/O. The outcome's generation is not known: it
	// is judged with whatever generation the store holds when it is merged (RecordGen says which).
	Record(role, method string, o Outcome, d time.Duration, reason string)
	// RecordGen adds one call's outcome produced by generation gen of role.method's code: it
	// counts in the method's totals, and in the recent window, the last failure and the durable
	// promotion only of that generation (see RecordBuffer.RecordGen). It does no I/O.
	RecordGen(role, method string, gen int, o Outcome, d time.Duration, reason string)
	// Flush writes what is buffered now.
	Flush() FlushReport
	// Close flushes and stops the background flushes.
	Close() FlushReport
}

// Docs is a small set of named documents (the learner's knowledge domains) that several
// processes read and change. Names are plain file names ("go.yaml").
type Docs interface {
	// Names lists the documents.
	Names() ([]string, error)
	// Read returns a document and an opaque version that changes whenever the document does
	// (nil, "", nil when it does not exist).
	Read(name string) (data []byte, version string, err error)
	// Modify replaces a document with fn(old) such that no concurrent Modify is lost; old is nil
	// when the document does not exist. An error from fn aborts (nothing is written).
	Modify(name string, fn func(old []byte) ([]byte, error)) error
	// Quarantine sets a damaged document aside (it then reads as missing) and says where it went.
	Quarantine(name string, why error) string
}

// Maintainer is what a backend offers operators beyond Backend: checking every record,
// setting damaged ones aside and restoring them. The directory store and the fleet store
// (registry/nats) implement it.
type Maintainer interface {
	Doctor() (DoctorReport, error)
	Quarantined() ([]QuarantineReport, error)
	QuarantineFile(path string, why error) QuarantineReport
	Dismiss(id string) (QuarantineReport, error)
	Restore(id string, now time.Time) (RestoreReport, error)
}

// ErrUnsupported is wrapped by errors for operations a backend does not offer.
var ErrUnsupported = errors.New("not supported by this store backend")

// Opener opens a store from a URL of its scheme (e.g. "nats://host:4222/forge").
type Opener func(url string, o OpenOptions) (Backend, error)

var (
	backendsMu sync.RWMutex
	backends   = map[string]Opener{}
)

// RegisterBackend makes a backend available to OpenBackend under scheme (e.g. "nats"). A backend
// package calls it from init; registering a scheme twice panics.
func RegisterBackend(scheme string, open Opener) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[scheme]; dup {
		panic("registry: backend scheme " + scheme + " registered twice")
	}
	backends[scheme] = open
}

// BackendSchemes lists the registered URL schemes.
func BackendSchemes() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	out := make([]string, 0, len(backends))
	for s := range backends {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// OpenBackend opens the store spec names: SCHEME://... for a registered backend, anything else a
// directory (OpenWith).
func OpenBackend(spec string, o OpenOptions) (Backend, error) {
	if IsURL(spec) {
		scheme, _, _ := strings.Cut(spec, "://")
		backendsMu.RLock()
		open := backends[scheme]
		backendsMu.RUnlock()
		if open == nil {
			known := BackendSchemes()
			if len(known) == 0 {
				return nil, fmt.Errorf("registry: store %q: no backend for %s:// is built in; pass a directory", redact.URL(spec), scheme)
			}
			return nil, fmt.Errorf("registry: store %q: no backend for %s:// (known: %s://); pass a directory or one of those", redact.URL(spec), scheme, strings.Join(known, "://, "))
		}
		return open(spec, o)
	}
	return OpenWith(spec, o)
}

// The directory store is a Backend and a Maintainer.
var (
	_ Backend    = (*Store)(nil)
	_ Maintainer = (*Store)(nil)
)

// Location is the store's directory.
func (s *Store) Location() string { return s.root }

// LocalDir is the store's directory: a directory store shares nothing beyond its machine.
func (s *Store) LocalDir() string { return s.root }

// NewRecorder starts a Recorder flushing into s (see the package function NewRecorder).
func (s *Store) NewRecorder(interval time.Duration) MetricsRecorder { return NewRecorder(s, interval) }

// Knowledge is nil: the learner keeps its domain files in the store's knowledge/ directory.
func (s *Store) Knowledge() Docs { return nil }

// Close stops the revalidation sweep; a directory store holds no connection, and its recorders
// and watchers are closed by whoever started them.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.stopSweep()
	return nil
}

// Importer writes records exactly as given — counters, times, lifecycle and kept generations
// included — replacing what the store holds under their keys. `forge store migrate` copies one
// backend into another through it; the forge never uses it. Both backends implement it.
type Importer interface {
	ImportRole(rec RoleRecord) error
	ImportArtifact(a *Artifact) error
}
