package yaegi

import (
	"fmt"
	"go/constant"
	"go/parser"
	"go/token"
	"io"
	"math/bits"
	"reflect"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/interp"
	gen "github.com/traefik/yaegi/stdlib/generic"

	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// What an interpreter costs is mostly what interp.Use does when its Exports hold "fmt/fmt": it
// compiles yaegi's generic standard packages (cmp, maps, slices) from source into that
// interpreter, about 850 KiB of heap each time, whether the code imports them or not. useStdlib
// loads the symbol tables without that key and does the rest of Use's standard-library step
// itself: the generic sources only for the code that imports them, and fixStdlib's part that
// applies to the allowlist (fmt.Print* to the interpreter's stdout). See RATIONALE, "Cheap
// interpreters".

// genericSources are yaegi's generic standard package sources by package name, in the order
// interp.Use compiles them (a package after those it imports).
var genericSources = func() []genericSource {
	var out []genericSource
	for _, src := range gen.Sources {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
		if err != nil {
			panic("yaegi generic source does not parse: " + err.Error())
		}
		gs := genericSource{name: f.Name.Name, code: src}
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			gs.imports = append(gs.imports, path)
		}
		out = append(out, gs)
	}
	return out
}()

type genericSource struct {
	name    string
	code    string
	imports []string
}

// genericImports returns the generic standard packages code (one or more files) imports, with
// the generic packages those import, in compile order; nil for code that imports none.
func genericImports(code ...string) []string {
	need := map[string]bool{}
	for _, c := range code {
		f, err := parser.ParseFile(token.NewFileSet(), "", c, parser.ImportsOnly)
		if err != nil {
			// The code was parsed before (gate): an error here means a rewrite broke it, which
			// the interpreter's compile reports; load every generic package meanwhile.
			for _, gs := range genericSources {
				need[gs.name] = true
			}
			break
		}
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			need[path] = true
		}
	}
	// Dependencies come first in genericSources: walk it backwards so that a package marks
	// what it imports before those are visited.
	for i := len(genericSources) - 1; i >= 0; i-- {
		if gs := genericSources[i]; need[gs.name] {
			for _, imp := range gs.imports {
				need[imp] = true
			}
		}
	}
	var out []string
	for _, gs := range genericSources {
		if need[gs.name] {
			out = append(out, gs.name)
		}
	}
	return out
}

// fmtKey is the fmt table's key in the Exports given to Use: any key but "fmt/fmt" (which makes
// Use compile every generic source) that Use reads as package "fmt" of import path "fmt"
// (path.Dir and path.Base clean the doubled slash).
const fmtKey = "fmt//fmt"

// useStdlib loads the allowlisted symbol tables into in (testify and the test clock for tests),
// fmt.Print, Printf and Println writing to stdout, and the generic packages named in generic.
//
// Nothing guest-writable is shared: Use copies every table into maps of the interpreter's own
// (binPkg), the tables hold no host variable by address (see package symbols), and the generic
// packages are compiled into this interpreter only.
func useStdlib(in *interp.Interpreter, stdout io.Writer, test bool, generic []string) error {
	syms := make(interp.Exports, len(symbols.Symbols))
	for k, v := range symbols.Symbols {
		if strings.HasPrefix(k, "github.com/stretchr/testify/") && !test {
			continue
		}
		if k == "fmt/fmt" {
			k = fmtKey
		}
		syms[k] = v
	}
	if test {
		syms["time/time"] = withTestClock(syms["time/time"])
	}
	if err := in.Use(syms); err != nil {
		return fmt.Errorf("load symbols: %w", err)
	}
	// What interp.fixStdlib does for the allowlisted packages: printing goes to the interpreter's
	// stdout (the call's logs), and math/bits.UintSize is this platform's. Scanning is refused by
	// the gate, and flag, log and os are not on the allowlist.
	if err := in.Use(interp.Exports{
		fmtKey: {
			"Print":   reflect.ValueOf(func(a ...any) (int, error) { return fmt.Fprint(stdout, a...) }),
			"Printf":  reflect.ValueOf(func(f string, a ...any) (int, error) { return fmt.Fprintf(stdout, f, a...) }),
			"Println": reflect.ValueOf(func(a ...any) (int, error) { return fmt.Fprintln(stdout, a...) }),
		},
		"math/bits/bits": {"UintSize": reflect.ValueOf(constant.MakeInt64(bits.UintSize))},
	}); err != nil {
		return fmt.Errorf("load fmt printing: %w", err)
	}
	for _, name := range generic {
		for _, gs := range genericSources {
			if gs.name != name {
				continue
			}
			if _, err := in.Compile(gs.code); err != nil {
				return fmt.Errorf("load generic package %s: %w", name, err)
			}
		}
	}
	return nil
}
