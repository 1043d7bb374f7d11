package main

import (
	"os"
	"path/filepath"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// sandboxNames lists the backends newSandbox knows, for help and errors.
const sandboxNames = "yaegi, wasm"

// newSandbox builds a sandbox backend by name ("" is the default, yaegi). Backends add their case
// here and nowhere else.
func newSandbox(name string) (sandbox.Sandbox, error) {
	switch name {
	case "", "yaegi":
		return yaegi.New(yaegi.Options{}), nil
	case "wasm":
		// Modules and compiled code are cached under the store's cache/ ($FORGE_STORE or the default).
		store, err := defaultStoreDir(os.Getenv, os.UserHomeDir)
		if err != nil {
			return nil, err
		}
		return wasm.New(wasm.Options{CacheDir: filepath.Join(store, "cache")})
	}
	return nil, usagef("unknown sandbox %q: want one of %s", name, sandboxNames)
}
