package yaegi

import (
	"go/ast"
	"go/token"
)

// CheckPolicy is the policy gate every backend shares (the wasm backend calls it too, so there is
// one policy): imports from the allowlist only, no go statements, no compiler directives, no cgo,
// no withheld symbols. test selects the acceptance-test allowlist (testing and testify on top).
func CheckPolicy(fset *token.FileSet, f *ast.File, test bool) error {
	return checkPolicy(fset, f, test)
}

// StdImport returns the allowlisted package a selector prefix most likely means ("strings",
// "json" -> "encoding/json"), so every backend adds the same forgotten imports.
func StdImport(name string) (string, bool) {
	p, ok := stdImports[name]
	return p, ok
}
