package gate

import (
	"maps"
	"slices"
	"strings"
)

// allowedPackage is one allowlisted import: the exported names generated code may reference
// (sorted), and whether only acceptance tests may import it.
type allowedPackage struct {
	testOnly bool
	names    []string
}

// genericPackages are the standard packages with generic APIs that yaegi loads from source
// (generics cannot be extracted into tables): allowed whole.
var genericPackages = map[string]bool{"slices": true, "maps": true, "cmp": true}

// testingNames is package testing as acceptance tests see it: the yaegi backend's native T and
// the two flags; the wasm backend compiles the real package, so the gate holds both to this.
var testingNames = map[string]bool{"T": true, "Short": true, "Verbose": true}

// interpreterStdio are names the generator withholds from the tables but yaegi itself defines
// when it loads the fmt table (interp.fixStdlib: printing goes to the interpreter's stdout, which
// the sandbox captures, as the wasm backend captures the module's stdout). Scanning is refused by
// deniedSymbols.
var interpreterStdio = map[string]bool{"fmt.Print": true, "fmt.Printf": true, "fmt.Println": true}

// testClock is what a test file may call on top of the allowlist: the clock, to seed math/rand
// or to measure (see RATIONALE, "Acceptance tests may use the clock").
var testClock = map[string]bool{"time.Now": true, "time.Since": true}

// Allowed reports whether code may import path: artifacts the allowlist, the generic standard
// packages and forge/host; tests (test) also testing and the test-only packages (testify,
// math/rand).
func Allowed(path string, test bool) bool {
	if p, ok := allowlist[path]; ok {
		return !p.testOnly || test
	}
	return genericPackages[path] || path == HostPackage || (test && path == "testing")
}

// TableNames returns the exported names code may reference in path as generated from the yaegi
// symbol table of path (sorted; a copy), and whether path has a table.
func TableNames(path string) ([]string, bool) {
	p, ok := allowlist[path]
	return slices.Clone(p.names), ok
}

// TablePaths lists the import paths that have generated tables, sorted.
func TablePaths() []string { return slices.Sorted(maps.Keys(allowlist)) }

// IsGeneric reports whether path is a standard package the yaegi backend loads from source.
func IsGeneric(path string) bool { return genericPackages[path] }

// symbolAllowed reports whether code may reference path.name (path is already allowed).
func symbolAllowed(path, name string, test bool) bool {
	switch {
	case genericPackages[path]:
		return true
	case path == HostPackage:
		return isHostName(name)
	case path == "testing":
		return testingNames[name]
	case test && testClock[path+"."+name], interpreterStdio[path+"."+name]:
		return true
	}
	p, ok := allowlist[path]
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(p.names, name)
	return found
}

// stdImports maps the names models use without importing them onto allowlisted packages.
var stdImports = map[string]string{
	"strings": "strings", "strconv": "strconv", "math": "math", "sort": "sort", "unicode": "unicode",
	"utf8": "unicode/utf8", "bytes": "bytes", "fmt": "fmt", "regexp": "regexp", "errors": "errors",
	"json": "encoding/json", "time": "time", "big": "math/big", "bits": "math/bits", "hex": "encoding/hex",
	"base64": "encoding/base64", "sha256": "crypto/sha256", "md5": "crypto/md5", "slices": "slices",
	"maps": "maps", "heap": "container/heap", "list": "container/list", "cmplx": "math/cmplx",
}

// StdImport returns the allowlisted package a selector prefix most likely means ("strings",
// "json" -> "encoding/json"), so every backend adds the same forgotten imports and the gate
// judges a forgotten import's uses exactly as if it were there.
func StdImport(name string) (string, bool) {
	p, ok := stdImports[name]
	return p, ok
}

// StdImports returns a copy of the StdImport table.
func StdImports() map[string]string { return maps.Clone(stdImports) }

// defaultName is the name an import of path binds without an alias.
func defaultName(path string) string { return path[strings.LastIndex(path, "/")+1:] }

// knownNames are the names the allowlisted packages bind by default, forge/host's and testing's:
// an import alias must not take one of them for another package (see checkImports).
var knownNames = func() map[string]string {
	m := map[string]string{"host": HostPackage, "testing": "testing"}
	for p := range allowlist {
		m[defaultName(p)] = p
	}
	for p := range genericPackages {
		m[p] = p
	}
	for n, p := range stdImports {
		m[n] = p
	}
	return m
}()
