package main

import (
	"errors"
	"os"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/sandbox"
)

// newSandbox builds the backend the flags name the way the forge does, with the wasm module cache
// under the store's (local directory's) cache/. No --sandbox means what a contract that names none gets
// (forge.ChooseDefault, $FORGE_SANDBOX): if that is yaegi in worker processes, the call input
// gets process isolation unless --isolation said otherwise.
func (a *app) newSandbox(f *sandboxFlags, in *sandbox.Input) (sandbox.Sandbox, error) {
	store, err := a.localStoreDir()
	if err != nil {
		return nil, err
	}
	name := f.backend
	if name == "" {
		p, err := forge.ChooseDefault(os.Getenv("FORGE_SANDBOX"), sandbox.Backends())
		if err != nil {
			return nil, usagef("$FORGE_SANDBOX: %v", err)
		}
		name = p.Backend
		if f.isolation == "" {
			in.Limits.Isolation = p.Isolation
		}
	}
	sb, err := forge.DefaultSandbox(name, store)
	if errors.Is(err, forge.ErrUnknownSandbox) {
		return nil, usagef("unknown sandbox %q: want one of %s", name, sandbox.BackendNames())
	}
	return sb, err
}
