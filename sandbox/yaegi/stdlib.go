package yaegi

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
	gen "github.com/traefik/yaegi/stdlib/generic"

	"github.com/artifactforge/forge/sandbox/gate"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// What an interpreter costs is mostly what interp.Use does when its Exports hold "fmt/fmt": it
// compiles yaegi's generic standard packages (cmp, maps, slices) from source into that
// interpreter, about 850 KiB of heap each time, whether the code imports them or not. useStdlib
// loads the symbol tables without that key and does the rest of Use's standard-library step
// itself: the generic sources only for the code that imports them, pruned to the declarations
// the code uses, and fixStdlib's part that applies to the allowlist (fmt.Print* to the
// interpreter's stdout). See RATIONALE, "Cheap interpreters".

// genericPkg is one of yaegi's generic standard package sources, parsed once (lazily: most
// processes never need one) into the units pruning works on.
type genericPkg struct {
	name    string
	code    string
	imports []string // import paths
	fset    *token.FileSet
	file    *ast.File
	units   []*genericUnit
	byName  map[string][]*genericUnit // unit(s) declaring a package-level name, methods by receiver type
}

// genericUnit is one top-level declaration: a function, a method, or a whole type, var or const
// declaration (a const block with iota stays together).
type genericUnit struct {
	decl   ast.Decl
	always bool                       // init and blank declarations
	refs   []string                   // identifiers it mentions
	sels   map[string]map[string]bool // import name -> selectors it uses
}

var (
	genericOnce sync.Once
	genericPkgs []*genericPkg // in the order interp.Use compiles them (a package after its imports)
)

func genericSources() []*genericPkg {
	genericOnce.Do(func() {
		for _, src := range gen.Sources {
			genericPkgs = append(genericPkgs, parseGeneric(src))
		}
	})
	return genericPkgs
}

func parseGeneric(src string) *genericPkg {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		panic("yaegi generic source does not parse: " + err.Error())
	}
	g := &genericPkg{name: f.Name.Name, code: src, fset: fset, file: f, byName: map[string][]*genericUnit{}}
	importNames := map[string]bool{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		g.imports = append(g.imports, path)
		importNames[gate.ImportName(is)] = true
	}
	for _, d := range f.Decls {
		u := &genericUnit{decl: d, sels: map[string]map[string]bool{}}
		var names []string
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					names = append(names, spec.Name.Name)
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						names = append(names, n.Name)
					}
				}
			}
		case *ast.FuncDecl:
			switch {
			case d.Recv != nil && len(d.Recv.List) == 1:
				names = append(names, "method:"+recvType(d.Recv.List[0].Type))
			case d.Name.Name == "init":
				u.always = true
			default:
				names = append(names, d.Name.Name)
			}
		}
		for _, n := range names {
			if n == "_" {
				u.always = true
			}
			g.byName[n] = append(g.byName[n], u)
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && importNames[x.Name] {
					if u.sels[x.Name] == nil {
						u.sels[x.Name] = map[string]bool{}
					}
					u.sels[x.Name][n.Sel.Name] = true
				}
			case *ast.Ident:
				u.refs = append(u.refs, n.Name)
			}
			return true
		})
		g.units = append(g.units, u)
	}
	return g
}

// recvType is the name of a method's receiver type (T, *T, T[K], *T[K]).
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// prune returns g's source reduced to the declarations that roots (the names code uses) need,
// directly or through each other, and what it uses of each package it imports.
func (g *genericPkg) prune(roots map[string]bool) (string, map[string]map[string]bool) {
	kept := map[*genericUnit]bool{}
	var work []*genericUnit
	add := func(name string) {
		for _, u := range g.byName[name] {
			if !kept[u] {
				kept[u] = true
				work = append(work, u)
			}
		}
	}
	for _, u := range g.units {
		if u.always {
			kept[u] = true
			work = append(work, u)
		}
	}
	for name := range roots {
		add(name)
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, r := range u.refs {
			add(r)
			add("method:" + r) // a kept type keeps its methods (interfaces, and calls through them)
		}
	}
	uses := map[string]map[string]bool{}
	var b strings.Builder
	b.WriteString("package " + g.name + "\n")
	for _, is := range g.file.Imports {
		name := gate.ImportName(is)
		path, _ := strconv.Unquote(is.Path.Value)
		for u := range kept {
			for sel := range u.sels[name] {
				if uses[path] == nil {
					uses[path] = map[string]bool{}
				}
				uses[path][sel] = true
			}
		}
		if uses[path] != nil {
			b.WriteString("\nimport " + g.text(is) + "\n")
		}
	}
	// The kept declarations' own text, in source order (their doc comments dropped).
	for _, u := range g.units {
		if kept[u] {
			b.WriteString("\n" + g.text(u.decl) + "\n")
		}
	}
	return b.String(), uses
}

// text is a node's source text.
func (g *genericPkg) text(n ast.Node) string {
	tf := g.fset.File(n.Pos())
	return g.code[tf.Offset(n.Pos()):tf.Offset(n.End())]
}

// genericCode returns the generic standard package sources that code (one or more files) needs,
// in compile order: for each generic package the code imports, the declarations it uses, with
// those they use, and the same for the generic packages those import. Nil for code that
// imports none.
func genericCode(code ...string) []string {
	pkgs := genericSources()
	roots := map[string]map[string]bool{} // generic package -> names used
	isGeneric := func(path string) bool {
		for _, g := range pkgs {
			if g.name == path {
				return true
			}
		}
		return false
	}
	for _, c := range code {
		f, err := parser.ParseFile(token.NewFileSet(), "", c, parser.SkipObjectResolution)
		if err != nil {
			// The code was parsed before (gate): an error here means a rewrite broke it, which
			// the interpreter's compile reports; load every generic package whole meanwhile.
			var all []string
			for _, g := range pkgs {
				all = append(all, g.code)
			}
			return all
		}
		names := map[string]string{} // import name -> generic package
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if isGeneric(path) {
				names[gate.ImportName(is)] = path
				if roots[path] == nil {
					roots[path] = map[string]bool{}
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] != "" {
					roots[names[x.Name]][sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	if len(roots) == 0 {
		return nil
	}
	// A package before the ones it imports (genericPkgs is in the opposite order), so that
	// what it uses of them is known when they are pruned.
	srcs := make([]string, len(pkgs))
	for i := len(pkgs) - 1; i >= 0; i-- {
		g := pkgs[i]
		if roots[g.name] == nil {
			continue
		}
		src, uses := g.prune(roots[g.name])
		srcs[i] = src
		for path, sels := range uses {
			if roots[path] == nil {
				roots[path] = map[string]bool{}
			}
			for s := range sels {
				roots[path][s] = true
			}
		}
	}
	var out []string
	for _, src := range srcs {
		if src != "" {
			out = append(out, src)
		}
	}
	return out
}

// fmtKey is the fmt table's key in the Exports given to Use: any key but "fmt/fmt" (which makes
// Use compile every generic source) that Use reads as package "fmt" of import path "fmt"
// (path.Dir and path.Base clean the doubled slash).
const fmtKey = "fmt//fmt"

// useStdlib loads the allowlisted symbol tables into in (testify and the test clock for tests),
// fmt.Print, Printf and Println writing to stdout, and the generic package sources in generic
// (see genericCode).
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
	for _, src := range generic {
		if _, err := in.Compile(src); err != nil {
			return fmt.Errorf("load generic package: %w", err)
		}
	}
	return nil
}
