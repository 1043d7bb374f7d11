package main

import (
	"errors"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/sandbox"
)

// sandboxNames lists the backends forge.DefaultSandbox knows, for help and errors.
const sandboxNames = "yaegi, wasm"

// newSandbox builds a sandbox backend by name ("" is the default, yaegi) the way the forge does,
// with the wasm module cache under the store's cache/.
func (a *app) newSandbox(name string) (sandbox.Sandbox, error) {
	store, err := a.storeDir()
	if err != nil {
		return nil, err
	}
	sb, err := forge.DefaultSandbox(name, store)
	if errors.Is(err, forge.ErrUnknownSandbox) {
		return nil, usagef("unknown sandbox %q: want one of %s", name, sandboxNames)
	}
	return sb, err
}
