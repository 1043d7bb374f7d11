package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Backend describes a sandbox backend. Backends register themselves from their package's init
// (sandbox/yaegi, sandbox/wasm), so adding one is adding a package: the forge, the CLI and the
// prompt ask the registry instead of naming backends.
type Backend struct {
	// Name is what a contract's "sandbox" field and --sandbox say ("yaegi", "wasm").
	Name string
	// Summary is one line for help texts.
	Summary string
	// Contains reports whether the backend, as New builds it, contains hostile code on its own:
	// a guest cannot crash, hang or poison the host process whatever it does. Only a backend that
	// contains may serve contracts that name no sandbox.
	Contains bool
	// ContainsIsolated names the isolation mode (limits.isolation, e.g. IsolationProcess) under
	// which a backend that does not contain on its own does; empty if none. When no containing
	// backend can run here, contracts that name no sandbox fall back to such a backend in that
	// mode (forge.ChooseDefault).
	ContainsIsolated string
	// OptIn keeps a backend that contains hostile code from being chosen for contracts that name
	// no sandbox: it runs only where a contract, --sandbox or $FORGE_SANDBOX names it (native:
	// machine code under seccomp is a thinner boundary than wasm's, see RATIONALE).
	OptIn bool
	// Prompt is what code written for this backend must know beyond the common rules (its gaps,
	// what to avoid); it is added to the system prompt of every generation for it. Empty: the
	// backend runs the Go the rules describe.
	Prompt string
	// Available returns nil when the backend can run on this machine, else why not (the wasm
	// backend needs a Go toolchain).
	Available func() error
	// New builds the backend for a store.
	New func(Config) (Sandbox, error)
	// PruneCache, if set, removes what the backend keeps in cacheDir (Config.CacheDir) that was
	// not used since unusedSince, and leftovers of crashed writes; with dryRun it only reports.
	// Everything in the cache can be rebuilt. `forge prune` and `forge doctor` call it through
	// forge.PruneCaches.
	PruneCache func(cacheDir string, unusedSince time.Time, dryRun bool) (CacheReport, error)
	// NeedsWarm and Warm, if set, are Warmer for the machine rather than a store: whether this
	// machine's toolchain has yet to prepare itself for the backend, and that preparation, which
	// needs no store (what a detached warm-up runs; see forge.BackgroundWarmUp).
	NeedsWarm func() bool
	Warm      func(context.Context) error
}

// CacheFile is one file of a backend's cache.
type CacheFile struct {
	Path     string    `json:"path"`
	Bytes    int64     `json:"bytes"`
	LastUsed time.Time `json:"last_used"`
}

// CacheReport says what a cache pruning removed (or would remove) and what it kept.
type CacheReport struct {
	Removed      []CacheFile `json:"removed"`
	RemovedBytes int64       `json:"removed_bytes"`
	Kept         int         `json:"kept"`
	KeptBytes    int64       `json:"kept_bytes"`
}

// Add adds o's files and sizes to r.
func (r *CacheReport) Add(o CacheReport) {
	r.Removed = append(r.Removed, o.Removed...)
	r.RemovedBytes += o.RemovedBytes
	r.Kept += o.Kept
	r.KeptBytes += o.KeptBytes
}

// Config is what a backend may need from the program that builds it.
type Config struct {
	// CacheDir is the store's cache directory (built modules, compiled code); empty means the
	// backend's own default.
	CacheDir string
	// RecordDir is where a backend records the checksums of what it keeps in CacheDir, outside
	// it, so that a file swapped or planted in the cache is not used (the store's sums/; empty:
	// the backend's default inside CacheDir).
	RecordDir string
	// PoolSize bounds the interpreters or instances kept per program (0: the backend's default,
	// 2 x GOMAXPROCS).
	PoolSize int
	// IdleTimeout is how long an interpreter or instance beyond a program's first may idle before
	// it is ended (0: the backend's default, 30 s; negative: never).
	IdleTimeout time.Duration
	// MaxWorkers bounds the worker processes of a backend that runs programs in them (yaegi's
	// process isolation) over all programs (0: the backend's default, max(8, 2 x GOMAXPROCS)).
	// A working set of isolated programs larger than it restarts a worker on nearly every call.
	MaxWorkers int
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// Register makes a backend available by name. It panics on an empty or duplicate name or a nil
// New, as database/sql.Register does: both are programming errors found at start-up.
func Register(b Backend) {
	if b.Name == "" || b.New == nil {
		panic("sandbox: Register needs a name and New")
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[b.Name]; dup {
		panic("sandbox: Register called twice for backend " + b.Name)
	}
	backends[b.Name] = b
}

// LookupBackend returns the registered backend called name.
func LookupBackend(name string) (Backend, bool) {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	b, ok := backends[name]
	return b, ok
}

// Backends returns every registered backend, sorted by name.
func Backends() []Backend {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	out := make([]Backend, 0, len(backends))
	for _, b := range backends {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Backend) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// BackendNames lists the registered backends' names, "a, b", for help texts and errors.
func BackendNames() string {
	var names []string
	for _, b := range Backends() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// Usable returns nil when b can run here (a nil Available means always), else why not.
func (b Backend) Usable() error {
	if b.Available == nil {
		return nil
	}
	if err := b.Available(); err != nil {
		return fmt.Errorf("sandbox %s is not available here: %w", b.Name, err)
	}
	return nil
}
