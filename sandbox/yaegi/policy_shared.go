package yaegi

import (
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// Gate runs exactly what Compile runs before anything else: parse, then the shared gate
// (sandbox/gate.Check). It exists so that tests can hold both backends to the same verdicts.
func Gate(src sandbox.Source) error {
	_, _, _, err := gateSource(src.Code)
	return err
}

// GateTests runs what Test runs before anything else: Gate on the artifact, then the shared gate
// on the test file (test rules, the artifact's imports visible) and the boundary check.
func GateTests(src sandbox.Source, testCode string) error {
	fset, f, _, err := gateSource(src.Code)
	if err != nil {
		return err
	}
	if _, _, err := gateTestFile(fset, f, testCode); err != nil {
		return gate.InTests(err)
	}
	return nil
}
