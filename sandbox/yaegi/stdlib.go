package yaegi

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io"
	"math/bits"
	"path"
	"reflect"
	"sort"
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
				names = append(names, "method:"+gate.ReceiverType(d.Recv.List[0].Type))
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

// useStdlib loads the allowlisted symbol tables named in tables into in (testify and the test
// clock only for tests),
// fmt.Print, Printf and Println writing to stdout, and the generic package sources in generic
// (see genericCode).
//
// Nothing guest-writable is shared: Use copies every table into maps of the interpreter's own
// (binPkg), the tables hold no host variable by address (see package symbols), and the generic
// packages are compiled into this interpreter only.
func useStdlib(in *interp.Interpreter, stdout io.Writer, test bool, generic []string, tables map[string]bool) error {
	syms := make(interp.Exports, len(tables))
	for k, v := range symbols.Symbols {
		if !tables[k] || strings.HasPrefix(k, "github.com/stretchr/testify/") && !test {
			continue
		}
		if k == "fmt/fmt" {
			k = fmtKey
		}
		syms[k] = v
	}
	if test && syms["time/time"] != nil {
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

// Symbol tables per interpreter. Use copies every table it is given into maps of the
// interpreter's own: ~70 KiB for the whole allowlist, most of it for packages the code never
// imports. An interpreter gets the tables of the packages its code imports, and of the packages
// whose interface types those tables' symbols (and the slot's and host API's) mention: yaegi
// looks up an interface's wrapper ("_Reader") in the table of the interface's own package when
// guest code hands a value of its own type to a native function (bufio.NewScanner(r) with r a
// guest type that has a Read method needs io's table, imported or not).

// tableKeys maps an import path to its symbol table's key ("strings" -> "strings/strings").
var tableKeys = func() map[string]string {
	m := make(map[string]string, len(symbols.Symbols))
	for k := range symbols.Symbols {
		m[path.Dir(k)] = k
	}
	return m
}()

var (
	ifaceMu   sync.Mutex
	ifaceDeps = map[string][]string{} // table key -> import paths of the interfaces it mentions
)

// interfacePaths adds to out the package paths of the named interface types that vals' types
// mention, through pointers, containers, function signatures, exported fields and methods.
func interfacePaths(vals map[string]reflect.Value, out map[string]bool) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Func:
			for i := range t.NumIn() {
				walk(t.In(i))
			}
			for i := range t.NumOut() {
				walk(t.Out(i))
			}
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() {
					walk(f.Type)
				}
			}
		case reflect.Interface:
			if t.PkgPath() != "" {
				out[t.PkgPath()] = true
			}
			for i := range t.NumMethod() {
				walk(t.Method(i).Type)
			}
			return
		}
		if t.Name() != "" {
			for _, mt := range []reflect.Type{t, reflect.PointerTo(t)} {
				for i := range mt.NumMethod() {
					walk(mt.Method(i).Type)
				}
			}
		}
	}
	for _, v := range vals {
		if v.IsValid() {
			walk(v.Type())
		}
	}
}

// tableInterfaces returns (and caches) the interface packages a symbol table mentions.
func tableInterfaces(key string) []string {
	ifaceMu.Lock()
	defer ifaceMu.Unlock()
	if deps, ok := ifaceDeps[key]; ok {
		return deps
	}
	set := map[string]bool{}
	interfacePaths(symbols.Symbols[key], set)
	deps := make([]string, 0, len(set))
	for p := range set {
		deps = append(deps, p)
	}
	ifaceDeps[key] = deps
	return deps
}

// importPaths returns the import paths of code (one or more files), sorted; nil if a file does
// not parse (the interpreter's compile reports it), which loads every table.
func importPaths(code ...string) []string {
	set := map[string]bool{}
	for _, c := range code {
		f, err := parser.ParseFile(token.NewFileSet(), "", c, parser.ImportsOnly)
		if err != nil {
			return nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// tablesFor returns the keys of the symbol tables an interpreter needs: those of imports (nil:
// all), of the generic sources' imports, and of every interface package mentioned by those
// tables or by extra (the slot's and the host API's symbols), transitively.
func tablesFor(imports []string, generic []string, extra ...map[string]reflect.Value) map[string]bool {
	keys := map[string]bool{}
	if imports == nil {
		for k := range symbols.Symbols {
			keys[k] = true
		}
		return keys
	}
	var work []string
	addPath := func(p string) {
		if k, ok := tableKeys[p]; ok && !keys[k] {
			keys[k] = true
			work = append(work, k)
		}
	}
	for _, p := range imports {
		addPath(p)
	}
	for _, src := range generic {
		for _, p := range importPaths(src) {
			addPath(p)
		}
	}
	set := map[string]bool{}
	for _, vals := range extra {
		interfacePaths(vals, set)
	}
	for p := range set {
		addPath(p)
	}
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range tableInterfaces(k) {
			addPath(p)
		}
	}
	return keys
}
