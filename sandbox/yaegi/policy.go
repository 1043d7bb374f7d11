package yaegi

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// HostPackage is the import path of the host API inside the sandbox.
const HostPackage = "forge/host"

// genericPackages are the stdlib packages yaegi loads from source (generics cannot be extracted).
var genericPackages = map[string]bool{"slices": true, "maps": true, "cmp": true}

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
// tables (sandbox/yaegi/symbols/gen), with what to use instead.
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

// deniedTestMethods are testify helpers withheld from acceptance tests: they poll guest code in
// goroutines (a panic there would kill the host) or touch files and HTTP servers.
var deniedTestMethods = map[string]string{
	"Eventually": "assert the condition directly", "Eventuallyf": "assert the condition directly",
	"EventuallyWithT": "assert the condition directly", "EventuallyWithTf": "assert the condition directly",
	"Never": "assert the condition directly", "Neverf": "assert the condition directly",
	"FileExists": "tests get no files", "NoFileExists": "tests get no files", "DirExists": "tests get no files",
	"NoDirExists": "tests get no files", "FileEmpty": "tests get no files", "FileNotEmpty": "tests get no files",
	"Parallel": "tests run sequentially",
}

func policyError(fset *token.FileSet, pos token.Pos, hint, format string, args ...any) *sandbox.Error {
	return &sandbox.Error{Kind: sandbox.KindPolicy, Line: fset.Position(pos).Line, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// checkPolicy is the gate before compile: imports from the allowlist only, no go statements, no
// compiler directives, no cgo, no withheld symbols, nothing named like the sandbox's own rewrites.
// test selects the acceptance-test allowlist (testing and testify on top of the artifact's).
func checkPolicy(fset *token.FileSet, f *ast.File, test bool) error {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//export ") || strings.HasPrefix(c.Text, "//line ") {
				return policyError(fset, c.Pos(), "remove compiler directives: generated code is plain Go", "directive %q is not allowed", strings.Fields(c.Text)[0])
			}
		}
	}
	imports := map[string]string{} // local name -> path
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		ok := symbols.Allowed[path] || genericPackages[path] || path == HostPackage
		if _, testOnly := symbols.Allowed[path]; test && (testOnly || path == "testing") {
			ok = true
		}
		if !ok {
			hint := deniedPackages[path]
			if hint == "" {
				if strings.Contains(path, ".") {
					hint = "only the standard library allowlist and forge/host can be imported; nothing is loaded from disk or the network"
				} else {
					hint = "this package is not on the sandbox allowlist; use strings, strconv, math, sort, slices, maps, unicode, bytes, encoding/json, regexp, time, errors, fmt"
				}
			}
			return policyError(fset, is.Pos(), hint, "import %q is not allowed", path)
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		imports[name] = path
	}
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			err = policyError(fset, n.Pos(), "compute sequentially: goroutines are not available (a panic in one would kill the host)", "go statement is not allowed")
		case *ast.Ident:
			if strings.HasPrefix(n.Name, "forge__") {
				err = policyError(fset, n.Pos(), "rename it", "identifier %s is reserved for the sandbox", n.Name)
			}
		case *ast.FuncDecl:
			if n.Recv == nil && n.Name.Name == "main" && !test {
				err = policyError(fset, n.Pos(), "export the method's function instead; artifacts have no main", "func main is not allowed in an artifact")
			}
		case *ast.SelectorExpr:
			x, ok := n.X.(*ast.Ident)
			if ok {
				if path, isPkg := imports[x.Name]; isPkg {
					key := path[strings.LastIndex(path, "/")+1:] + "." + n.Sel.Name
					if hint, denied := deniedSymbols[key]; denied {
						err = policyError(fset, n.Pos(), hint, "%s.%s is not available in the sandbox", x.Name, n.Sel.Name)
						return false
					}
				}
			}
			if test {
				if hint, denied := deniedTestMethods[n.Sel.Name]; denied {
					err = policyError(fset, n.Pos(), hint, "%s is not available in acceptance tests", n.Sel.Name)
				}
			}
		}
		return true
	})
	return err
}
