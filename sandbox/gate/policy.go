package gate

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// deniedPackages says, for the imports people (and models) reach for, what to use instead.
var deniedPackages = map[string]string{
	"os":            "artifacts get no files, processes or environment: take data as arguments and return results",
	"os/exec":       "artifacts cannot start processes",
	"os/signal":     "artifacts cannot handle signals",
	"io/ioutil":     "artifacts get no files: take data as arguments",
	"io/fs":         "artifacts get no files: take data as arguments",
	"path/filepath": "artifacts get no files; use strings or path for plain string paths",
	"net":           "use host.Get / host.Do (needs the http capability)",
	"net/http":      "use host.Get / host.Do (needs the http capability)",
	"unsafe":        "use ordinary typed Go",
	"reflect":       "use type switches, generics or encoding/json",
	"syscall":       "artifacts get no system calls",
	"runtime":       "artifacts cannot control the runtime",
	"runtime/debug": "artifacts cannot control the runtime",
	"plugin":        "artifacts cannot load code",
	"C":             "cgo is not available: write pure Go",
	"log":           "use host.Log (needs the log capability) or return an error",
	"math/rand":     "use host.Rand / host.RandIntn (needs the rand capability)",
	"math/rand/v2":  "use host.Rand / host.RandIntn (needs the rand capability)",
	"crypto/rand":   "use host.Rand / host.RandIntn (needs the rand capability)",
	"sync":          "artifacts are single-goroutine: no locks are needed",
	"sync/atomic":   "artifacts are single-goroutine: use plain variables",
	"context":       "the sandbox owns the call's deadline; take no context",
	"time/tzdata":   "use time.UTC or time.FixedZone",
	"testing":       "testing is only for acceptance tests",
	"embed":         "artifacts get no files: inline the data",
	"text/template": "use fmt.Sprintf or strings.Builder",
	"html/template": "use fmt.Sprintf or strings.Builder",
	"iter":          "return slices instead of iterators",
}

// deniedSymbols are symbols of allowed packages that reach the host, withheld from the generated
// tables (sandbox/yaegi/symbols/gen), with what to use instead. Test files may call the clock
// (testClock).
var deniedSymbols = map[string]string{
	"time.Sleep":        "no sleeping: every call has a deadline",
	"time.After":        "no timers: every call has a deadline",
	"time.AfterFunc":    "no timers: code cannot run after the call",
	"time.Tick":         "no timers: every call has a deadline",
	"time.NewTicker":    "no timers: every call has a deadline",
	"time.NewTimer":     "no timers: every call has a deadline",
	"time.Now":          "use host.Now() (needs the now capability) or take the time as an argument",
	"time.Since":        "use host.Now().Sub(t) (needs the now capability)",
	"time.Until":        "use t.Sub(host.Now()) (needs the now capability)",
	"time.LoadLocation": "use time.UTC or time.FixedZone: no zoneinfo files are readable",
	"time.Local":        "use time.UTC or time.FixedZone",
	"fmt.Scan":          "there is no stdin: take data as arguments",
	"fmt.Scanf":         "there is no stdin: take data as arguments",
	"fmt.Scanln":        "there is no stdin: take data as arguments",
	"io.Pipe":           "pipes need goroutines: use bytes.Buffer",
}

// deniedPrefixes give the hint for withheld symbols found by prefix.
var deniedPrefixes = []struct{ prefix, hint string }{
	{"io.Pipe", "pipes need goroutines: use bytes.Buffer"},
	{"math/rand.Read", "fill the bytes from rand.Intn"},
}

// deniedTestMethods are testing and testify helpers withheld from acceptance tests: they poll
// guest code in goroutines (a panic there would kill the host), touch files, the environment or
// HTTP servers, or exist only in the real testing package (the yaegi backend's T lacks them).
// init adds testify's (with their f variants).
var deniedTestMethods = map[string]string{
	"Parallel": "tests run sequentially",
	"TempDir":  "tests get no files", "ArtifactDir": "tests get no files", "Chdir": "tests get no files",
	"Setenv":  "tests get no environment",
	"Context": "the sandbox owns the test's deadline", "Deadline": "the sandbox owns the test's deadline",
}

func init() {
	// testify's *Assertions methods the generator withholds as functions (File, Dir, HTTP,
	// Eventually, Never), with their f variants: a method call is not a package selector, so the
	// symbol allowlist cannot catch it.
	for _, m := range []struct{ names, hint string }{
		{"FileExists NoFileExists DirExists NoDirExists FileEmpty FileNotEmpty", "tests get no files"},
		{"HTTPBodyContains HTTPBodyNotContains HTTPError HTTPRedirect HTTPStatusCode HTTPSuccess", "tests get no HTTP servers: call the artifact directly"},
		{"Eventually EventuallyWithT Never", "assert the condition directly"},
	} {
		for _, n := range strings.Fields(m.names) {
			deniedTestMethods[n], deniedTestMethods[n+"f"] = m.hint, m.hint
		}
	}
}

// predeclared are the universe scope's names. A package-level declaration of one would change
// what the code each backend generates into the artifact's package means (its dispatcher uses
// any, error, string, len, append, ...), so it is refused; a local one is fine. min and max are
// left out: models write their own (pre-Go 1.21 habit), no generated code calls them, and the
// yaegi rewrite of the builtins leaves a declared min or max alone.
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
	"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true, "int32": true,
	"int64": true, "rune": true, "string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true, "true": true, "false": true, "iota": true, "nil": true,
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// Options selects the rules a file is checked under.
type Options struct {
	// Test selects the acceptance-test rules (testing, testify, math/rand, time.Now, time.Since
	// on top of the artifact's).
	Test bool
	// Companion holds the imports (local name -> path) of the file this one is compiled with: a
	// test file may use the artifact's imports without repeating them (both backends let it).
	Companion map[string]string
}

func policyError(fset *token.FileSet, pos token.Pos, hint, format string, args ...any) *sandbox.Error {
	return &sandbox.Error{Kind: sandbox.KindPolicy, Line: fset.Position(pos).Line, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// Check is the gate every backend runs on a parsed file before compiling it: the policy
// (KindPolicy: imports from the allowlist only, no dot imports, only allowlisted symbols, no go
// statements, no compiler directives or build constraints, no cgo, nothing named like the
// sandbox's generated code, no package-level shadowing of predeclared names), then no function
// that can end without a return (KindCompile, see sandbox.CheckReturns: an interpreter would
// return zero values where Go refuses to compile).
func Check(fset *token.FileSet, f *ast.File, opts Options) error {
	if err := checkPolicy(fset, f, opts); err != nil {
		return err
	}
	return sandbox.CheckReturns(fset, f)
}

// checkPolicy is Check without the missing-return check.
func checkPolicy(fset *token.FileSet, f *ast.File, opts Options) error {
	if err := checkComments(fset, f); err != nil {
		return err
	}
	imports, err := checkImports(fset, f, opts.Test)
	if err != nil {
		return err
	}
	if err := checkTopLevel(fset, f); err != nil {
		return err
	}
	return checkBody(fset, f, opts, resolver(f, imports, opts.Companion))
}

// checkComments refuses compiler directives: //go: (linkname, embed, build, ...), //export, line
// directives in both comment forms (they would make errors name lines the model never wrote) and
// legacy "// +build" constraints (which can make a build leave the file out).
func checkComments(fset *token.FileSet, f *ast.File) error {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			t := c.Text
			directive := strings.HasPrefix(t, "//go:") || strings.HasPrefix(t, "//export ") ||
				strings.HasPrefix(t, "//line ") || strings.HasPrefix(t, "/*line ")
			if directive {
				return policyError(fset, c.Pos(), "remove compiler directives: generated code is plain Go", "directive %q is not allowed", strings.Fields(t)[0])
			}
			if body := strings.TrimSpace(strings.TrimPrefix(t, "//")); strings.HasPrefix(t, "//") && strings.HasPrefix(body, "+build") {
				return policyError(fset, c.Pos(), "remove build constraints: generated code is plain Go, built for one target", "build constraint %q is not allowed", "+build")
			}
		}
	}
	return nil
}

// checkImports checks every import against the allowlist and returns local name -> path. Dot
// imports are refused (they would put a package's names, time.Now among them, in file scope,
// where no selector names them), and so are aliases that take another package's name.
func checkImports(fset *token.FileSet, f *ast.File, test bool) (map[string]string, error) {
	imports := map[string]string{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		if !Allowed(path, test) {
			hint := deniedPackages[path]
			switch {
			case hint == "" && strings.Contains(path, "."):
				hint = "only the standard library allowlist and forge/host can be imported; nothing is loaded from disk or the network"
			case hint == "":
				hint = "this package is not on the sandbox allowlist; use strings, strconv, math, sort, slices, maps, unicode, bytes, encoding/json, regexp, time, errors, fmt"
			}
			return nil, policyError(fset, is.Pos(), hint, "import %q is not allowed", path)
		}
		name := defaultName(path)
		if is.Name != nil {
			switch is.Name.Name {
			case ".":
				return nil, policyError(fset, is.Pos(), fmt.Sprintf("import it by name and write %s.Name: the gate checks every use of a package through its name", name),
					"dot import of %q is not allowed", path)
			case "_":
				continue // init effects only; every allowlisted package's are pure
			}
			if p, taken := knownNames[is.Name.Name]; taken && p != path && is.Name.Name != name {
				return nil, policyError(fset, is.Pos(), fmt.Sprintf("import %q under another name (or unaliased)", path),
					"import alias %s for %q is the name of package %q", is.Name.Name, path, p)
			}
			name = is.Name.Name
		}
		imports[name] = path
	}
	return imports, nil
}

// checkTopLevel refuses package-level declarations of predeclared names (type any = int, func
// len, var nil): the code each backend adds to the artifact's package relies on them. It also
// refuses a package-level type _, which only one backend compiles.
func checkTopLevel(fset *token.FileSet, f *ast.File) error {
	refuse := func(id *ast.Ident) error {
		if id == nil || !predeclared[id.Name] {
			return nil
		}
		return policyError(fset, id.Pos(), "rename it: a package-level "+id.Name+" would change what the predeclared "+id.Name+" means in the whole package",
			"package-level declaration of predeclared %s is not allowed", id.Name)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if err := refuse(d.Name); err != nil {
					return err
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if err := refuse(s.Name); err != nil {
						return err
					}
					if s.Name.Name == "_" {
						// It declares nothing; the interpreter cannot compile it (wasm can): refused
						// so that both backends agree.
						return policyError(fset, s.Name.Pos(), "delete it: a type named _ declares nothing", "package-level type _ is not allowed")
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if err := refuse(id); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// resolver returns the package path a selector's left identifier names ("" for anything else):
// an import, else for a name the file never declares the package a backend would import for it
// (the test file's companion imports, then StdImport), so a forgotten import is judged exactly
// as if it were written. An imported name counts as the package everywhere, even where a local
// shadows it: that can refuse a rare program but never lets a package reference through. (Exact
// scoping would need go/types, which evaluates constants: a doubling string constant would then
// cost the host gigabytes before any sandbox bound applies.)
func resolver(f *ast.File, imports, companion map[string]string) func(*ast.Ident) string {
	var declared map[string]bool // computed on the first name that is not an import
	return func(id *ast.Ident) string {
		if p, ok := imports[id.Name]; ok {
			return p
		}
		if declared == nil {
			declared = DeclaredNames(f)
		}
		if declared[id.Name] {
			return ""
		}
		if p := companion[id.Name]; p != "" {
			return p
		}
		p, _ := StdImport(id.Name)
		return p
	}
}

func checkBody(fset *token.FileSet, f *ast.File, opts Options, pkgOf func(*ast.Ident) string) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			err = policyError(fset, n.Pos(), "compute sequentially: goroutines are not available (a panic in one would kill the host)", "go statement is not allowed")
		case *ast.Ident:
			if reserved(n.Name) {
				err = policyError(fset, n.Pos(), "rename it", "identifier %s is reserved for the sandbox", n.Name)
			}
		case *ast.FuncDecl:
			switch {
			case n.Recv == nil && n.Name.Name == "main" && !opts.Test:
				err = policyError(fset, n.Pos(), "export the method's function instead; artifacts have no main", "func main is not allowed in an artifact")
			case n.Recv == nil && n.Name.Name == "main":
				// The yaegi backend interprets tests as package main (it would run it on load), the
				// wasm backend never calls it: refused so both behave alike.
				err = policyError(fset, n.Pos(), "write TestXxx(t *testing.T) functions; the sandbox runs them", "func main is not allowed in acceptance tests")
			}
		case *ast.SelectorExpr:
			if reserved(n.Sel.Name) {
				err = policyError(fset, n.Sel.Pos(), "rename it", "identifier %s is reserved for the sandbox", n.Sel.Name)
				return false
			}
			if x, ok := n.X.(*ast.Ident); ok {
				if path := pkgOf(x); path != "" {
					err = checkSymbol(fset, n, x.Name, path, opts.Test)
					return err == nil
				}
			}
			if opts.Test {
				if hint, denied := deniedTestMethods[n.Sel.Name]; denied {
					err = policyError(fset, n.Pos(), hint, "%s is not available in acceptance tests", n.Sel.Name)
				}
			}
		}
		return true
	})
	return err
}

// checkSymbol checks a reference name.Sel to package path.
func checkSymbol(fset *token.FileSet, n *ast.SelectorExpr, name, path string, test bool) error {
	sel := n.Sel.Name
	key := defaultName(path) + "." + sel
	if test && testClock[path+"."+sel] {
		return nil
	}
	if hint, denied := deniedSymbols[key]; denied && !genericPackages[path] {
		return policyError(fset, n.Pos(), hint, "%s.%s is not available in the sandbox", name, sel)
	}
	if symbolAllowed(path, sel, test) {
		return nil
	}
	hint := fmt.Sprintf("package %s in the sandbox has no %s: use another of its functions or plain Go", path, sel)
	for _, d := range deniedPrefixes {
		if strings.HasPrefix(path+"."+sel, d.prefix) {
			hint = d.hint
		}
	}
	switch path {
	case HostPackage:
		hint = "forge/host exports " + strings.Join(hostAPI, ", ")
	case "testing":
		hint = "acceptance tests get testing.T (and testing.Short, testing.Verbose)"
		return policyError(fset, n.Pos(), hint, "%s.%s is not available in acceptance tests", name, sel)
	}
	return policyError(fset, n.Pos(), hint, "%s.%s is not available in the sandbox", name, sel)
}

// reserved reports whether name is the sandbox's own: forge__ in any letter case (the generated
// dispatchers, call stubs and test hooks such as testing.Forge__Begin use it).
func reserved(name string) bool {
	return len(name) >= 7 && strings.EqualFold(name[:7], "forge__")
}

// DeclaredNames lists every name the file defines anywhere (top level, parameters, locals), so
// that a variable that shadows a package name is never taken for a forgotten import.
func DeclaredNames(f *ast.File) map[string]bool { return declaredIn(f) }

// declaredIn lists every name declared anywhere under n.
func declaredIn(n ast.Node) map[string]bool {
	m := map[string]bool{}
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if id != nil {
				m[id.Name] = true
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Name)
		case *ast.TypeSpec:
			add(n.Name)
		case *ast.ValueSpec:
			add(n.Names...)
		case *ast.Field:
			add(n.Names...)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				if id, ok := n.Key.(*ast.Ident); ok {
					add(id)
				}
				if id, ok := n.Value.(*ast.Ident); ok {
					add(id)
				}
			}
		}
		return true
	})
	return m
}
