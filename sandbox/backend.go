package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"sync"
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
	// Available returns nil when the backend can run on this machine, else why not (the wasm
	// backend needs a Go toolchain).
	Available func() error
	// New builds the backend for a store.
	New func(Config) (Sandbox, error)
}

// Config is what a backend may need from the program that builds it.
type Config struct {
	// CacheDir is the store's cache directory (built modules, compiled code); empty means the
	// backend's own default.
	CacheDir string
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
