package forge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/artifactforge/forge/sandbox"
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

// ErrNoSandbox is returned when no registered backend can run contracts that name no sandbox:
// none is registered (the program imports no backend), or none that contains hostile code, on its
// own or isolated, can run here.
var ErrNoSandbox = errors.New("no sandbox backend can run here")

// ChooseDefault decides where a contract that names no sandbox runs: the operator's choice if
// there is one (Options.DefaultSandbox, $FORGE_SANDBOX), else the first registered backend that
// contains hostile code on its own, is not opt-in (Backend.OptIn: native) and can run here (wasm
// with a Go toolchain), else the first
// that contains it in an isolation mode (yaegi in worker processes, where compile, initializers
// and calls all run under rlimits and a crash kills only the worker). Safe by default: a backend
// that is no security boundary as built (in-process yaegi) is only ever used when named.
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
		if b.Contains && !b.OptIn && b.Usable() == nil {
			return Placement{Backend: b.Name}, nil
		}
	}
	for _, b := range backends {
		if b.ContainsIsolated != "" && !b.OptIn && b.Usable() == nil {
			return Placement{Backend: b.Name, Isolation: b.ContainsIsolated}, nil
		}
	}
	if len(backends) == 0 {
		return Placement{}, fmt.Errorf("forge: %w: this program registers no backend; import the set it ships, "+
			"e.g. _ \"github.com/artifactforge/forge/forge/all\"", ErrNoSandbox)
	}
	var why []string
	for _, b := range backends {
		if err := b.Usable(); err != nil {
			why = append(why, err.Error())
		} else if b.OptIn {
			why = append(why, "sandbox "+b.Name+" runs only where named")
		} else {
			why = append(why, "sandbox "+b.Name+" does not contain hostile code")
		}
	}
	return Placement{}, fmt.Errorf("forge: %w (%s); name one for trusted code with --sandbox or $FORGE_SANDBOX",
		ErrNoSandbox, strings.Join(why, "; "))
}
