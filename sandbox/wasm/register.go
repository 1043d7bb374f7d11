package wasm

import "github.com/artifactforge/forge/sandbox"

// Name is the backend's name in contracts ("sandbox": "wasm") and --sandbox.
const Name = "wasm"

func init() {
	sandbox.Register(sandbox.Backend{
		Name:     Name,
		Summary:  "WebAssembly run by wazero: memory cap, fuel-checked deadline, no filesystem or sockets (needs a Go toolchain)",
		Contains: true,
		Available: func() error {
			_, err := findToolchain("")
			return err
		},
		New: func(c sandbox.Config) (sandbox.Sandbox, error) {
			return New(Options{CacheDir: c.CacheDir, RecordDir: c.RecordDir, PoolSize: c.PoolSize, IdleTimeout: c.IdleTimeout})
		},
		PruneCache: PruneCache,
		NeedsWarm:  MachineNeedsWarm,
		Warm:       WarmMachine,
	})
}
