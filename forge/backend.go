package forge

import (
	"fmt"

	"github.com/artifactforge/forge/sandbox"
	// The built-in backends register themselves.
	_ "github.com/artifactforge/forge/sandbox/wasm"
	_ "github.com/artifactforge/forge/sandbox/yaegi"
)

// Placement is where a role's code runs: a registered backend and its isolation mode.
type Placement struct {
	Backend   string
	Isolation string
}

// String names the placement: "wasm", "yaegi", "yaegi (isolation process)".
func (p Placement) String() string {
	if p.Isolation != "" {
		return p.Backend + " (isolation " + p.Isolation + ")"
	}
	return p.Backend
}

// DefaultPlacement is where this forge runs contracts that name no sandbox.
func (f *Forge) DefaultPlacement() Placement { return f.placement }

// FallbackPlacement is the default when no backend that contains hostile code on its own can run
// here (the wasm backend needs a Go toolchain): the yaegi interpreter in worker processes, where
// compile, initializers and calls all run under rlimits and a crash kills only the worker.
var FallbackPlacement = Placement{Backend: "yaegi", Isolation: sandbox.IsolationProcess}

// ChooseDefault decides where a contract that names no sandbox runs: the operator's choice if
// there is one (Options.DefaultSandbox, $FORGE_SANDBOX), else the first registered backend that
// contains hostile code on its own and can run here, else FallbackPlacement. Safe by default:
// in-process yaegi, which is fast but no security boundary, is only ever used when named.
func ChooseDefault(operator string, backends []sandbox.Backend) (Placement, error) {
	if operator != "" {
		for _, b := range backends {
			if b.Name == operator {
				return Placement{Backend: operator}, nil
			}
		}
		return Placement{}, fmt.Errorf("forge: default sandbox %q: %w; use one of %s", operator, ErrUnknownSandbox, sandbox.BackendNames())
	}
	for _, b := range backends {
		if b.Contains && b.Usable() == nil {
			return Placement{Backend: b.Name}, nil
		}
	}
	return FallbackPlacement, nil
}
