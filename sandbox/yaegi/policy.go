package yaegi

import (
	"go/ast"
	"go/token"
	"reflect"
	"strconv"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// HostPackage is the import path of the host API inside the sandbox.
const HostPackage = gate.HostPackage

// stdImports maps the names models use without importing them onto allowlisted packages (the
// gate's table: both backends add the same forgotten imports).
var stdImports = gate.StdImports()

// genericPackages are the stdlib packages yaegi loads from source (generics cannot be extracted).
var genericPackages = map[string]bool{"slices": true, "maps": true, "cmp": true}

func init() {
	for p := range genericPackages {
		if !gate.IsGeneric(p) {
			panic("yaegi: " + p + " is loaded from source but the gate does not allow it whole")
		}
	}
}

// testClock is what acceptance tests may call on top of the artifact's tables (the gate allows
// time.Now and time.Since in test files only; see gate.Options.Test). It is added to the test
// interpreters' time table, never to the shared one.
var testClock = map[string]reflect.Value{
	// In the guest's zone, as every time the time table hands out (symbols/tz.go).
	"Now":   reflect.ValueOf(func() time.Time { return time.Now().In(symbols.GuestLocal) }),
	"Since": reflect.ValueOf(time.Since),
}

// withTestClock returns a copy of the time table with the test clock added.
func withTestClock(table map[string]reflect.Value) map[string]reflect.Value {
	m := make(map[string]reflect.Value, len(table)+len(testClock))
	for k, v := range table {
		m[k] = v
	}
	for k, v := range testClock {
		m[k] = v
	}
	return m
}

// gateSource parses code and runs the shared gate on it, as an artifact.
func gateSource(code string) (*token.FileSet, *ast.File, string, error) {
	fset := token.NewFileSet()
	f, parsed, err := sandbox.ParseFile(fset, code)
	if err != nil {
		return nil, nil, "", err
	}
	if err := gate.Check(fset, f, gate.Options{}); err != nil {
		return nil, nil, "", err
	}
	return fset, f, parsed, nil
}

// gateTestFile parses testCode into fset and runs the shared gate on it as a test file compiled
// with the artifact f, then the boundary check (the artifact sees no test-only names).
func gateTestFile(fset *token.FileSet, f *ast.File, testCode string) (*ast.File, string, error) {
	tf, tparsed, err := sandbox.ParseFile(fset, testCode)
	if err != nil {
		return nil, "", err
	}
	if err := gate.Check(fset, tf, gate.Options{Test: true, Companion: importsOf(f)}); err != nil {
		return nil, "", err
	}
	if err := gate.CheckTestBoundary(fset, f, tf); err != nil {
		return nil, "", err
	}
	return tf, tparsed, nil
}

func importsOf(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, is := range f.Imports {
		if n := gate.ImportName(is); n != "_" && n != "." {
			m[n], _ = strconv.Unquote(is.Path.Value)
		}
	}
	return m
}
