package main

import (
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// sandboxNames lists the backends newSandbox knows, for help and errors.
const sandboxNames = "yaegi"

// newSandbox builds a sandbox backend by name ("" is the default, yaegi). Backends add their case
// here and nowhere else.
func newSandbox(name string) (sandbox.Sandbox, error) {
	switch name {
	case "", "yaegi":
		return yaegi.New(yaegi.Options{}), nil
	}
	return nil, usagef("unknown sandbox %q: want one of %s", name, sandboxNames)
}
