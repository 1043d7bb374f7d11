package wasm

import (
	"go/ast"
	"go/token"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// Gate runs exactly what Compile runs before building: parse, normalize (package artifact,
// forgotten imports added, unused ones blanked) and the shared gate (sandbox/gate.Check). It
// exists so that tests can hold both backends to the same verdicts.
func Gate(src sandbox.Source) error {
	_, _, err := gateCode(src.Code, false, nil)
	return err
}

// GateTests runs what Test runs before building: Gate on the artifact, the shared gate on the
// test file (test rules, the artifact's imports visible) and the boundary check.
func GateTests(src sandbox.Source, testCode string) error {
	_, _, _, err := gateSuite(src.Code, testCode)
	return err
}

func addMissingImports(code string, f *ast.File, fset *token.FileSet, companion map[string]string) string {
	return guestgen.AddMissingImports(code, f, fset, companion)
}

func blankUnusedImports(code string, f *ast.File, fset *token.FileSet) string {
	return guestgen.BlankUnusedImports(code, f, fset)
}
