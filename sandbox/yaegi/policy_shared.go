package yaegi

import (
	"go/ast"
	"go/token"

	"github.com/artifactforge/forge/sandbox"
)

// CheckPolicy is the gate every backend shares (the wasm backend calls it too, so there is one
// policy): imports from the allowlist only, no go statements, no compiler directives, no cgo, no
// withheld symbols (KindPolicy), then no function that can end without a return (KindCompile, see
// sandbox.CheckReturns: the interpreter would return zero values where Go refuses to compile).
// test selects the acceptance-test allowlist (testing and testify on top).
func CheckPolicy(fset *token.FileSet, f *ast.File, test bool) error {
	if err := checkPolicy(fset, f, test); err != nil {
		return err
	}
	return sandbox.CheckReturns(fset, f)
}

// StdImport returns the allowlisted package a selector prefix most likely means ("strings",
// "json" -> "encoding/json"), so every backend adds the same forgotten imports.
func StdImport(name string) (string, bool) {
	p, ok := stdImports[name]
	return p, ok
}
