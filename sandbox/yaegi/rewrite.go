package yaegi

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// The rewrites below edit the source text at byte offsets and never add or remove a newline, so
// that every line an error names is the line the model wrote. Helpers and the call stub go after
// the last line.

type edit struct {
	pos, end int // byte offsets; pos == end inserts
	text     string
	closer   bool // goes before the other edits at its position (it closes an expression there)
}

type rewriter struct {
	fset  *token.FileSet
	file  *ast.File
	src   string
	base  int // file base offset in fset
	info  *types.Info
	edits []edit
	// declared holds every name the file declares anywhere, so builtins shadowed by the code are
	// left alone.
	declared  map[string]bool
	imports   map[string]string // local name -> path
	typeNames map[string]bool
	needSort  bool
	guarded   bool // a depth guard was inserted
	n         int
}

func (r *rewriter) off(p token.Pos) int { return int(p) - r.base }

func (r *rewriter) add(pos, end int, text string) {
	r.edits = append(r.edits, edit{pos: pos, end: end, text: text})
}

// addCloser inserts text that closes an expression ending at pos: before a statement's suffix
// inserted there (a guarded return's "; forge__depth--; ...", a checked write's " }").
func (r *rewriter) addCloser(pos int, text string) {
	r.edits = append(r.edits, edit{pos: pos, end: pos, text: text, closer: true})
}

func (r *rewriter) text(n ast.Node) string { return r.src[r.off(n.Pos()):r.off(n.End())] }

func (r *rewriter) tmp() string {
	r.n++
	return "forge__v" + strconv.Itoa(r.n)
}

// typeString prints t as it must be written inside the file (package names, not paths).
func (r *rewriter) typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == nil || p.Path() == "artifact" {
			return ""
		}
		return p.Name()
	})
}

func (r *rewriter) typeOf(e ast.Expr) types.Type {
	if r.info == nil {
		return nil
	}
	tv, ok := r.info.Types[e]
	if !ok || tv.Type == nil {
		return nil
	}
	if b, ok := tv.Type.(*types.Basic); ok && b.Kind() == types.Invalid {
		return nil
	}
	return tv.Type
}

// fakeImporter gives every import an empty, complete package: the type checker then knows the
// file's own types and builtins, which is all the rewrites need, without reading anything from disk.
type fakeImporter struct{}

func (fakeImporter) Import(path string) (*types.Package, error) {
	name := path[strings.LastIndex(path, "/")+1:]
	if strings.HasPrefix(name, "v") && len(name) > 1 && name[1] >= '0' && name[1] <= '9' {
		p := strings.TrimSuffix(path, "/"+name)
		name = p[strings.LastIndex(p, "/")+1:]
	}
	pkg := types.NewPackage(path, name)
	pkg.MarkComplete()
	return pkg, nil
}

func typeCheck(fset *token.FileSet, files []*ast.File) *types.Info {
	info, _ := typeCheckUndefined(fset, files)
	return info
}

// typeCheckUndefined is typeCheck that also returns the first name the code uses but neither
// declares nor imports ("undefined: io"), which no Go compiler accepts: the interpreter panics
// ("incomplete type io", a nil dereference), and the model was told to write its code another
// way instead of to import the package. Names the rewrite imports by itself (gate.StdImport: a
// forgotten "strings") do not count, nor undefined selectors of imported packages: the importer
// here knows no package's contents. Other errors are not reported: with that importer, types
// from imported packages are invalid and their uses cascade (a variable used only in a range
// assignment of such a type is reported "declared and not used", which Go accepts).
func typeCheckUndefined(fset *token.FileSet, files []*ast.File) (*types.Info, *sandbox.Error) {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var first *sandbox.Error
	conf := types.Config{Importer: fakeImporter{}, Error: func(err error) {
		te, ok := err.(types.Error)
		if !ok || first != nil {
			return
		}
		pos := te.Fset.Position(te.Pos)
		fail := func(hint string) {
			first = &sandbox.Error{Kind: sandbox.KindCompile, Line: pos.Line, Message: fmt.Sprintf("%d:%d: %s", pos.Line, pos.Column, te.Msg), Hint: hint}
		}
		name, found := strings.CutPrefix(te.Msg, "undefined: ")
		if !found || strings.Contains(name, ".") {
			return
		}
		if _, auto := gate.StdImport(name); auto {
			return
		}
		hint := "declare it, or import the package it names"
		for _, path := range gate.TablePaths() {
			if path[strings.LastIndex(path, "/")+1:] == name && gate.Allowed(path, false) {
				hint = fmt.Sprintf("add import %q", path)
				break
			}
		}
		fail(hint)
	}}
	_, _ = conf.Check("artifact", fset, files, info)
	for _, f := range files {
		if first == nil {
			first = gapRefusal(fset, f, info)
		}
	}
	return info, first
}

func newRewriter(fset *token.FileSet, f *ast.File, src string, info *types.Info) *rewriter {
	r := &rewriter{fset: fset, file: f, src: src, base: fset.File(f.Pos()).Base(), info: info,
		declared: map[string]bool{}, imports: map[string]string{}, typeNames: map[string]bool{}}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		r.imports[gate.ImportName(is)] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv == nil {
				r.declared[n.Name.Name] = true
			}
		case *ast.TypeSpec:
			r.declared[n.Name.Name] = true
			r.typeNames[n.Name.Name] = true
		case *ast.ValueSpec:
			for _, id := range n.Names {
				r.declared[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				r.declared[id.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						r.declared[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return r
}

// blank removes a node's text, keeping its newlines.
func (r *rewriter) blank(n ast.Node) {
	t := r.text(n)
	r.add(r.off(n.Pos()), r.off(n.End()), strings.Repeat("\n", strings.Count(t, "\n")))
}

// autoImports adds the import of an allowlisted package the code uses but forgot to import (a
// common slip in generated code: it compiles once the import is there). The import goes on the
// package line so no line moves; it returns the extra import text.
func (r *rewriter) autoImports() string {
	var extra []string
	ast.Inspect(r.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || r.declared[x.Name] || r.imports[x.Name] != "" {
			return true
		}
		if path, known := stdImports[x.Name]; known {
			r.imports[x.Name] = path
			extra = append(extra, fmt.Sprintf("; import %q", path))
		}
		return true
	})
	return strings.Join(extra, "")
}

// packageMain renames the package to main (the interpreter compiles call stubs in main's scope)
// and adds the sandbox's imports on the package line.
func (r *rewriter) packageMain(extraImports string) {
	r.add(r.off(r.file.Name.Pos()), r.off(r.file.Name.End()), "main; import forge__slot \"forge/slot\""+extraImports)
}

var builtinNames = map[string]bool{"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true,
	"delete": true, "imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
	"bool": true, "byte": true, "rune": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true, "float32": true,
	"float64": true, "string": true, "error": true, "any": true, "complex64": true, "complex128": true}

// mayRecurse reports whether body can call back into guest code: a call through anything but a
// builtin, a conversion or an imported package's function. Leaf functions skip the depth guard,
// which keeps small hot functions fast.
func (r *rewriter) mayRecurse(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			found = true
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				if !(builtinNames[fn.Name] && !r.declared[fn.Name]) && !r.typeNames[fn.Name] {
					found = true
				}
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); !ok || r.imports[x.Name] == "" || r.declared[x.Name] {
					found = true
				} else if r.imports[x.Name] == HostPackage || genericPackages[r.imports[x.Name]] || r.imports[x.Name] == "sort" {
					// host.Call re-enters the forge; slices/sort take guest callbacks.
					found = true
				}
			case *ast.ParenExpr, *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StarExpr:
			default:
				found = true
			}
		}
		return true
	})
	return found
}

const depthEnter = " forge__depth++; if forge__depth > forge__maxDepth { forge__slot.DepthExceeded() }; "

// guardDepth counts call depth in every function that may recurse: increment on entry, decrement
// on each return (results are evaluated first, into typed temporaries) and at the end of a
// function without results. A defer would be simpler but costs yaegi about 3x on recursive code.
// Past the limit the host stops the interpreter (no panic unwinding through thousands of frames).
//
// Native code can call guest code back: a function literal or a function value handed to
// strings.Map, sort.Slice or a Regexp's ReplaceAllStringFunc, a method called through an
// interface (String, Error, MarshalJSON, Less). Such a function can be re-entered without
// calling anything itself (f = func(r rune) rune { strings.Map(f, "x"); ... }), so every function
// literal, every method and every top-level function used as a value is guarded, whatever its
// body calls; each level of that recursion then counts against the same depth cap.
func (r *rewriter) guardDepth() {
	asValue := r.funcsUsedAsValues()
	ast.Inspect(r.file, func(n ast.Node) bool {
		var body *ast.BlockStmt
		var ft *ast.FuncType
		reentrant := false
		switch n := n.(type) {
		case *ast.FuncDecl:
			body, ft = n.Body, n.Type
			reentrant = n.Recv != nil || asValue[n.Name.Name]
		case *ast.FuncLit:
			body, ft, reentrant = n.Body, n.Type, true
		}
		if body == nil || !reentrant && !r.mayRecurse(body) {
			return true
		}
		r.guarded = true
		r.add(r.off(body.Lbrace)+1, r.off(body.Lbrace)+1, depthEnter)
		var results []string
		named := false
		if ft.Results != nil {
			for _, f := range ft.Results.List {
				k := len(f.Names)
				if k == 0 {
					k = 1
				} else {
					named = true
				}
				for range k {
					results = append(results, r.text(f.Type))
				}
			}
		}
		ast.Inspect(body, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.FuncLit:
				return false // guarded on its own
			case *ast.ReturnStmt:
				r.guardReturn(m, results, named)
			}
			return true
		})
		if len(results) == 0 {
			r.add(r.off(body.Rbrace), r.off(body.Rbrace), "; forge__depth-- ")
		}
		return true
	})
}

// funcsUsedAsValues returns the top-level functions the file mentions other than by calling them
// (strings.Map(upper, s), f := step): native code may call those back.
func (r *rewriter) funcsUsedAsValues() map[string]bool {
	top := map[string]bool{}
	skip := map[*ast.Ident]bool{}
	for _, d := range r.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			top[fd.Name.Name] = true
			skip[fd.Name] = true
		}
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.SelectorExpr:
			skip[n.Sel] = true // x.Name is a field or method, not the top-level Name
		}
		return true
	})
	used := map[string]bool{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && top[id.Name] && !skip[id] {
			used[id.Name] = true
		}
		return true
	})
	return used
}

func (r *rewriter) guardReturn(m *ast.ReturnStmt, results []string, named bool) {
	start, end := r.off(m.Pos()), r.off(m.End())
	if len(m.Results) == 0 || len(results) == 0 {
		r.add(start, start, "forge__depth--; ")
		return
	}
	var decl, names []string
	for i, t := range results {
		name := "forge__r" + strconv.Itoa(i)
		decl = append(decl, fmt.Sprintf("var %s %s", name, t))
		names = append(names, name)
	}
	list := strings.Join(names, ", ")
	_ = named
	if len(m.Results) == len(results) && len(results) > 1 {
		// One assignment per result: yaegi v0.16.1 panics on an untyped nil inside a tuple
		// assignment ("reflect: New(nil)"). Only the commas change, so lines stay put.
		r.add(start, start+len("return"), "{ "+strings.Join(decl, "; ")+"; forge__r0 =")
		for i := 1; i < len(m.Results); i++ {
			from, to := r.off(m.Results[i-1].End()), r.off(m.Results[i].Pos())
			if c := strings.IndexByte(r.src[from:to], ','); c >= 0 {
				r.add(from+c, from+c+1, "; forge__r"+strconv.Itoa(i)+" =")
			}
		}
	} else {
		r.add(start, start+len("return"), "{ "+strings.Join(decl, "; ")+"; "+list+" =")
	}
	r.add(end, end, "; forge__depth--; return "+list+" }")
}

// guardWrites checks every write through a pointer whose type the file does not know (a
// package's type: *loc = ..., *p += ..., (*p)++), or to a type parameter, with
// forge__slot.CheckWrite, which stops the write if the pointer is one the host shares with every
// caller (see slot.checkWrite). Writes through the file's own pointers are untouched (no cost).
//
// The pointer is evaluated once, into a temporary, and that temporary is both checked and written
// through: a right-hand side that moves the pointer (*p = f() with f setting p) cannot slip a
// different pointer past the check, and a pointer expression spanning lines needs no copy.
// Every statement position is covered: statements of blocks, case and select clauses (under any
// number of labels), if/switch/type switch/for init statements and for post statements (as a
// function literal called in place: the only form that is a simple statement), range
// assignments (for *p = range xs) and select receive assignments (case *p = <-ch), which take
// the value into a temporary first. Function literals are walked like any code, so deferred
// closures are covered too.
//
// It also runs the rewrites that keep other host state out of reach and that every caller of
// guardWrites needs: guestZone (the host's time zone) and guardStderr (text/scanner's default
// error output).
func (r *rewriter) guardWrites() {
	r.guestZone()
	r.guardStderr()
	ast.Inspect(r.file, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
			if as, ok := n.Comm.(*ast.AssignStmt); ok && as.Tok == token.ASSIGN {
				r.guardRecvAssign(n, as)
			}
		case *ast.IfStmt:
			r.guardSimple(n.Init, true)
		case *ast.SwitchStmt:
			r.guardSimple(n.Init, true)
		case *ast.TypeSwitchStmt:
			r.guardSimple(n.Init, true)
		case *ast.ForStmt:
			r.guardSimple(n.Init, true)
			r.guardSimple(n.Post, true)
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				r.guardRangeAssign(n)
			}
		}
		for _, st := range list {
			for {
				l, ok := st.(*ast.LabeledStmt)
				if !ok {
					break
				}
				st = l.Stmt
			}
			r.guardSimple(st, false)
		}
		return true
	})
}

// writeTarget returns the pointer a write to e goes through when it needs the check: e is *p
// (in any parentheses) and p's type is unknown to the file (a package's) or a pointer to a type
// parameter (set(t.UTC().Location(), v) through func set[T any](p *T, v T) { *p = v }).
func (r *rewriter) writeTarget(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return nil
	}
	if t := r.typeOf(star.X); t != nil {
		p, isPtr := t.Underlying().(*types.Pointer)
		if !isPtr {
			return nil
		}
		if _, generic := p.Elem().(*types.TypeParam); !generic {
			return nil
		}
	}
	return star.X
}

// refusedWrite is the call that replaces (or precedes) a checked write the rewrite cannot
// express on the statement's own lines (a pointer expression spanning lines in a multi-target
// assignment, a range or a select receive): an undefined function, so the interpreter's compile
// error names it and the program is refused rather than run unchecked.
const refusedWrite = "forge__refused_write_through_a_package_pointer_spanning_lines__write_it_on_one_line"

// guardSimple checks the writes of one simple statement (an assignment or ++/--). A statement in
// a block becomes a block of its own; one in a header (closure) becomes a function literal
// called in place.
func (r *rewriter) guardSimple(st ast.Stmt, closure bool) {
	var lhs []ast.Expr
	switch st := st.(type) {
	case *ast.AssignStmt:
		if st.Tok == token.DEFINE {
			return
		}
		lhs = st.Lhs
	case *ast.IncDecStmt:
		lhs = []ast.Expr{st.X}
	default:
		return
	}
	var ptrs []ast.Expr
	for _, l := range lhs {
		if p := r.writeTarget(l); p != nil {
			ptrs = append(ptrs, p)
		}
	}
	if len(ptrs) == 0 {
		return
	}
	open, close := "{ ", " }"
	if closure {
		open, close = "func() { ", " }()"
	}
	start, end := r.off(st.Pos()), r.off(st.End())
	if len(lhs) == 1 {
		// In place: "*(P) op= x" becomes "{ forge__pN := P; CheckWrite(forge__pN); *forge__pN op= x }",
		// P's own text untouched (rewrites inside it still apply, lines stay put). What surrounds P
		// in the target is only stars, parentheses and space: its newlines are kept.
		p, name := ptrs[0], r.ptrName()
		pstart, pend, lend := r.off(p.Pos()), r.off(p.End()), r.off(lhs[0].End())
		r.add(start, pstart, open+name+" := "+newlines(r.src[start:pstart]))
		r.add(pend, lend, newlines(r.src[pend:lend])+"; forge__slot.CheckWrite("+name+"); *"+name)
		r.add(end, end, close)
		return
	}
	// Several targets: each pointer is copied into its temporary first.
	var pre strings.Builder
	pre.WriteString(open)
	var names []string
	for _, p := range ptrs {
		text := r.text(p)
		if strings.Contains(text, "\n") {
			r.add(start, end, newlines(r.src[start:end])+refusedWrite+"()")
			return
		}
		name := r.ptrName()
		names = append(names, name)
		fmt.Fprintf(&pre, "%s := %s; ", name, text)
	}
	for _, name := range names {
		fmt.Fprintf(&pre, "forge__slot.CheckWrite(%s); ", name)
	}
	r.add(start, start, pre.String())
	for i, p := range ptrs {
		r.add(r.off(p.Pos()), r.off(p.End()), names[i])
	}
	r.add(end, end, close)
}

func (r *rewriter) ptrName() string {
	r.n++
	return "forge__p" + strconv.Itoa(r.n)
}

// newlines returns the newlines of s (what an edit must keep so that no line moves).
func newlines(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) }

// checkedAssign returns "{ forge__pN := P; ...; CheckWrite(forge__pN); L1, L2 = v1, v2 }" for the
// targets lhs (nil entries are left out with their values) assigned the temporaries vals, or
// false when a target spans lines (the caller then refuses the statement).
func (r *rewriter) checkedAssign(lhs []ast.Expr, vals []string) (string, bool) {
	var pre, checks strings.Builder
	var ls, vs []string
	for i, l := range lhs {
		if l == nil {
			continue
		}
		text := r.text(l)
		if strings.Contains(text, "\n") {
			return "", false
		}
		if p := r.writeTarget(l); p != nil {
			name := r.ptrName()
			fmt.Fprintf(&pre, "%s := %s; ", name, r.text(p))
			fmt.Fprintf(&checks, "forge__slot.CheckWrite(%s); ", name)
			text = "*" + name
		}
		ls = append(ls, text)
		vs = append(vs, vals[i])
	}
	return "{ " + pre.String() + checks.String() + strings.Join(ls, ", ") + " = " + strings.Join(vs, ", ") + " }; ", true
}

// guardRangeAssign rewrites "for K, *P = range X {" (a checked target among the key and value)
// as "for forge__kN, forge__vN := range X { { forge__pN := P; CheckWrite(forge__pN); K, *forge__pN =
// forge__kN, forge__vN }; ...". Ranging over an integer is left alone (yaegi v0.16.1 cannot, and
// refuses it).
func (r *rewriter) guardRangeAssign(rs *ast.RangeStmt) {
	if r.writeTarget(rs.Key) == nil && (rs.Value == nil || r.writeTarget(rs.Value) == nil) {
		return
	}
	if t := r.typeOf(rs.X); t != nil && isInteger(t) {
		return
	}
	lhs := []ast.Expr{rs.Key, rs.Value}
	k, v := r.tmp(), r.tmp()
	vals := []string{k, v}
	head := k + " :="
	if rs.Value != nil {
		head = k + ", " + v + " :="
	}
	assign, ok := r.checkedAssign(lhs, vals)
	if !ok {
		r.add(r.off(rs.Body.Lbrace)+1, r.off(rs.Body.Lbrace)+1, " "+refusedWrite+"(); ")
		return
	}
	r.add(r.off(rs.Key.Pos()), r.off(rs.TokPos)+len("="), head+newlines(r.src[r.off(rs.Key.Pos()):r.off(rs.TokPos)]))
	r.add(r.off(rs.Body.Lbrace)+1, r.off(rs.Body.Lbrace)+1, " "+assign)
}

// guardRecvAssign rewrites "case L1, *P = <-ch:" as "case forge__vN, forge__vM := <-ch: { forge__pK
// := P; CheckWrite(forge__pK); L1, *forge__pK = forge__vN, forge__vM };".
func (r *rewriter) guardRecvAssign(cc *ast.CommClause, as *ast.AssignStmt) {
	need := false
	for _, l := range as.Lhs {
		if r.writeTarget(l) != nil {
			need = true
		}
	}
	if !need {
		return
	}
	var vals []string
	for range as.Lhs {
		vals = append(vals, r.tmp())
	}
	assign, ok := r.checkedAssign(as.Lhs, vals)
	if !ok {
		r.add(r.off(cc.Colon)+1, r.off(cc.Colon)+1, " "+refusedWrite+"(); ")
		return
	}
	from := r.off(as.Lhs[0].Pos())
	r.add(from, r.off(as.TokPos)+len("="), strings.Join(vals, ", ")+" :="+newlines(r.src[from:r.off(as.TokPos)]))
	r.add(r.off(cc.Colon)+1, r.off(cc.Colon)+1, " "+assign)
}

// zoneMethods are the methods of time.Time that consult the host's time.Local: see guestZone.
// (json.Decoder's Decode needs no rewrite: the guest's Decoder is the sandbox's own type, whose
// Decode fixes what it decoded however it is reached; symbols/internal/json.)
var zoneMethods = map[string]bool{"Local": true, "UnmarshalJSON": true, "UnmarshalText": true,
	"UnmarshalBinary": true, "GobDecode": true}

// refusedZone is appended to a method name guestZone cannot route through the guest's zone (a
// method value of an Unmarshal method, or one called on an expression it cannot take the address
// of): the interpreter's compile error names it.
const refusedZone = "__forge_refused_in_process_yaegi_keeps_the_host_zone_here__call_it_on_a_variable"

// guestZone keeps the host's time zone out of guest code (symbols/tz.go has the why and the
// helpers). The time table's functions already give times in the guest's zone; what is left are
// the methods that consult time.Local whatever the table says, called on a value of a package's
// type (the file's type check cannot resolve them: time.Time, a struct of the file embedding it,
// json.Unmarshaler) or through an interface or type parameter of the file:
//
//	t.Local()            -> T.forge__local(t.Local())
//	t.Local (a value)    -> T.forge__localFunc(t.Local)
//	E.Local (E a type)   -> func(forge__t E) T.Time { return T.forge__local(forge__t.Local()) }
//	x.UnmarshalJSON(b)   -> T.forge__fixed(x.UnmarshalJSON(b), &x)   (Text, Binary, GobDecode)
//
// where T is the file's import of time (added when there is none). An Unmarshal method called on
// an expression with calls in it, or used as a value, is refused (compile error naming
// refusedZone): its receiver could not be fixed after the call.
func (r *rewriter) guestZone() {
	T := r.importFor("time", "forge__time")
	calls := r.selectorCalls()
	ast.Inspect(r.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || !zoneMethods[sel.Sel.Name] {
			return true
		}
		name := sel.Sel.Name
		if r.packageSelector(sel) {
			return true
		}
		call := calls[sel]
		selStart, selEnd := r.off(sel.Pos()), r.off(sel.End())
		if name == "Local" && r.isTypeExpr(sel.X) {
			// A method expression (time.Time.Local, (*time.Time).Local, S.Local with S embedding
			// time.Time, I.Local with I an interface of the file): a function literal of the same
			// signature, the call inside it routed. Its receiver's type is written as the code
			// wrote it; the literal keeps the expression's newlines.
			if r.hostLocalExpr(sel) {
				t := T()
				r.add(selStart, selEnd, fmt.Sprintf("func(forge__t %s) %s.Time { return %s.forge__local(forge__t.Local()) }",
					strings.ReplaceAll(r.text(sel.X), "\n", " "), t, t)+newlines(r.text(sel)))
			}
			return true
		}
		if !r.hostZoneMethod(sel) {
			return true
		}
		switch {
		case name == "Local" && call != nil:
			r.add(selStart, selStart, T()+".forge__local(")
			r.addCloser(r.off(call.End()), ")")
		case name == "Local":
			r.add(selStart, selStart, T()+".forge__localFunc(")
			r.addCloser(selEnd, ")")
		case call != nil && len(call.Args) == 1 && r.plainOperand(sel.X):
			// &x, so the receiver can be fixed in place; an interface or type parameter of the
			// file is handed over as it is (its dynamic value is the pointer the method needs).
			recv := "&" + r.text(sel.X)
			if r.interfaceOrTypeParam(sel.X) {
				recv = r.text(sel.X)
			}
			r.add(selStart, selStart, T()+".forge__fixed(")
			r.addCloser(r.off(call.End()), ", "+recv+")")
		default:
			r.add(r.off(sel.Sel.End()), r.off(sel.Sel.End()), refusedZone)
		}
		return true
	})
}

// importFor returns a function giving the file's import name of path, adding the import (named
// prefix and the file's base, so the artifact's and the test file's never collide) on the
// package line the first time it is needed when the file has none.
func (r *rewriter) importFor(path, prefix string) func() string {
	name := ""
	for n, p := range r.imports {
		if p == path && n != "_" && n != "." && !r.declared[n] {
			name = n
		}
	}
	return func() string {
		if name == "" {
			name = prefix + strconv.Itoa(r.base)
			r.imports[name] = path
			r.add(r.off(r.file.Name.End()), r.off(r.file.Name.End()), "; import "+name+" "+strconv.Quote(path))
		}
		return name
	}
}

// selectorCalls maps each selector called (x.M(...)) to its call.
func (r *rewriter) selectorCalls() map[*ast.SelectorExpr]*ast.CallExpr {
	calls := map[*ast.SelectorExpr]*ast.CallExpr{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
				calls[sel] = c
			}
		}
		return true
	})
	return calls
}

// packageSelector reports whether sel is a package's name (pkg.Name: the gate has judged it).
func (r *rewriter) packageSelector(sel *ast.SelectorExpr) bool {
	x, ok := sel.X.(*ast.Ident)
	return ok && r.imports[x.Name] != "" && !r.declared[x.Name]
}

// refusedField is appended to a text/scanner Error field guardStderr cannot route (assigned in a
// tuple assignment or a range clause, or its address taken): the interpreter's compile error
// names it.
const refusedField = "__forge_refused_assign_a_scanner_error_handler_on_its_own"

// guardStderr keeps guest code from writing to the process's standard error through a
// text/scanner.Scanner whose Error field is nil (symbols/scanner.go): Init's result, the method
// value s.Init and every value assigned to the Error field of a package's type pass through the
// text/scanner table's helpers, which never leave the field nil:
//
//	s.Init(r)     -> S.forge__init(s.Init(r))
//	s.Init        -> S.forge__initFunc(s.Init)
//	s.Error = f   -> s.Error = S.forge__error(f)
//
// Init and Error are resolved by the file's type check when they are the file's own; anything
// unresolved with one argument (Init) is text/scanner's: the only allowlisted Init taking one
// (container/list's takes none and is left alone when called). An Init of an interface or type
// parameter of the file taking one argument and returning a package's type may be the Scanner's
// and is routed the same way. What cannot be routed is refused (refusedField): the field's
// address (&s.Error, through which a later write would go unseen: *p = nil, set(&s.Error, nil)),
// and the field as a range clause's or tuple assignment's target.
func (r *rewriter) guardStderr() {
	S := r.importFor("text/scanner", "forge__scanner")
	calls := r.selectorCalls()
	unresolvedError := func(e ast.Expr) *ast.SelectorExpr {
		for {
			p, ok := e.(*ast.ParenExpr)
			if !ok {
				break
			}
			e = p.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Error" || r.packageSelector(sel) || r.typeOf(sel) != nil {
			return nil
		}
		return sel
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.UnaryExpr:
			if sel := unresolvedError(n.X); n.Op == token.AND && sel != nil {
				r.add(r.off(sel.End()), r.off(sel.End()), refusedField)
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if sel := unresolvedError(e); sel != nil && n.Tok == token.ASSIGN {
					r.add(r.off(sel.End()), r.off(sel.End()), refusedField)
				}
			}
		case *ast.SelectorExpr:
			if n.Sel.Name != "Init" || r.packageSelector(n) || !r.hostInit(n) {
				return true
			}
			start := r.off(n.Pos())
			switch call := calls[n]; {
			case call == nil:
				r.add(start, start, S()+".forge__initFunc(")
				r.addCloser(r.off(n.End()), ")")
			case len(call.Args) == 1:
				r.add(start, start, S()+".forge__init(")
				r.addCloser(r.off(call.End()), ")")
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				sel, ok := l.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Error" || r.packageSelector(sel) || r.typeOf(sel) != nil {
					continue
				}
				if n.Tok != token.ASSIGN || len(n.Lhs) != len(n.Rhs) {
					r.add(r.off(sel.End()), r.off(sel.End()), refusedField)
					continue
				}
				r.add(r.off(n.Rhs[i].Pos()), r.off(n.Rhs[i].Pos()), S()+".forge__error(")
				r.addCloser(r.off(n.Rhs[i].End()), ")")
			}
		}
		return true
	})
}

// hostInit reports whether sel (x.Init) may be text/scanner.Scanner's Init: the file's type
// check cannot resolve it, or it is a method of an interface or type parameter of the file that
// takes one argument and returns a package's type (*scanner.Scanner).
func (r *rewriter) hostInit(sel *ast.SelectorExpr) bool {
	t := r.typeOf(sel)
	if t == nil {
		return true
	}
	sig, ok := t.(*types.Signature)
	if !ok || !r.interfaceOrTypeParam(sel.X) || sig.Params().Len() != 1 || sig.Results().Len() != 1 {
		return false
	}
	b, ok := sig.Results().At(0).Type().(*types.Basic)
	return ok && b.Kind() == types.Invalid
}

// hostZoneMethod reports whether sel (x.Local, x.UnmarshalJSON, ...) may be time.Time's method: the file's type check cannot resolve it (x's type is a package's, or a
// struct of the file embedding one), or it is a method of an interface or type parameter of the
// file whose results mention a package's type (Local() time.Time; any Unmarshal method, whose
// receiver is then fixed, harmlessly if it is the file's own type).
func (r *rewriter) hostZoneMethod(sel *ast.SelectorExpr) bool {
	t := r.typeOf(sel)
	if t == nil {
		return true
	}
	sig, ok := t.(*types.Signature)
	if !ok {
		return false // a field
	}
	if r.typeOf(sel.X) == nil {
		return true
	}
	if !r.interfaceOrTypeParam(sel.X) {
		return false // a method the file declares
	}
	// The file's own interface: only a method of time.Time's shape can be time.Time's (and only that shape fits the helper it is routed through).
	if sig.Results().Len() != 1 {
		return false
	}
	rt := sig.Results().At(0).Type()
	if sel.Sel.Name == "Local" {
		b, ok := rt.(*types.Basic)
		return sig.Params().Len() == 0 && ok && b.Kind() == types.Invalid
	}
	return sig.Params().Len() == 1 && types.Identical(rt, types.Universe.Lookup("error").Type())
}

// interfaceOrTypeParam reports whether e's type (or the type it points to) is an interface or a
// type parameter the file's type check knows.
func (r *rewriter) interfaceOrTypeParam(e ast.Expr) bool {
	t := r.typeOf(e)
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if _, ok := t.(*types.TypeParam); ok {
		return true
	}
	_, ok := t.Underlying().(*types.Interface)
	return ok
}

// isTypeExpr reports whether e denotes a type (the receiver of a method expression): a type of
// a package (pkg.Name: no allowlisted package has a variable with a Local method), one the
// file's type check knows as a type, or a pointer to either, in any parentheses.
func (r *rewriter) isTypeExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return r.isTypeExpr(x.X)
	case *ast.StarExpr:
		return r.isTypeExpr(x.X)
	case *ast.SelectorExpr:
		if r.packageSelector(x) {
			return true
		}
	}
	if r.info == nil {
		return false
	}
	tv, ok := r.info.Types[e]
	return ok && tv.IsType()
}

// hostLocalExpr reports whether the method expression E.Local may be time.Time's: the file's
// type check cannot resolve it (a package's type, a struct of the file embedding one), or it
// takes the receiver alone and returns a package's type (an interface of the file whose Local
// returns time.Time). A type of the file with a Local of its own is left alone.
func (r *rewriter) hostLocalExpr(sel *ast.SelectorExpr) bool {
	t := r.typeOf(sel)
	if t == nil {
		return true
	}
	sig, ok := t.(*types.Signature)
	if !ok || sig.Params().Len() != 1 || sig.Results().Len() != 1 {
		return false
	}
	b, ok := sig.Results().At(0).Type().(*types.Basic)
	return ok && b.Kind() == types.Invalid
}

// plainOperand reports whether e can be written again after the call, to the same effect and
// with & in front: identifiers, selectors, indexes by identifiers or literals, dereferences and
// parentheses of those, on one line.
func (r *rewriter) plainOperand(e ast.Expr) bool {
	if strings.Contains(r.text(e), "\n") {
		return false
	}
	var plain func(e ast.Expr) bool
	plain = func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return true
		case *ast.SelectorExpr:
			return plain(e.X)
		case *ast.ParenExpr:
			return plain(e.X)
		case *ast.StarExpr:
			return plain(e.X)
		case *ast.IndexExpr:
			switch e.Index.(type) {
			case *ast.Ident, *ast.BasicLit:
				return plain(e.X)
			}
		}
		return false
	}
	return plain(e)
}

// gaps rewrites what yaegi v0.16.1 lacks: min/max/clear builtins, range over an integer,
// per-iteration loop variables captured by closures (and by deferred function literals), method
// expressions called on the spot, and slices.Sort & co.
func (r *rewriter) gaps() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			r.rewriteCall(n)
		case *ast.RangeStmt:
			r.rewriteRange(n)
		case *ast.ForStmt:
			r.rewriteFor(n)
		}
		return true
	})
	r.methodExprCalls()
	r.deferArgs()
	r.methodValues()
	r.constIota()
	r.fmtMethods()
	r.hideUnexported()
	r.typeSwitches()
	r.unsignedReturns()
}

// unsignedReturns writes the conversion a return statement leaves implicit into an unsigned
// integer result: return math.MaxUint64 (or 1<<64 - 1) from a func returning uint64 becomes
// return uint64(math.MaxUint64). yaegi v0.16.1 converts an untyped constant returned as an
// unsigned result through int, and one above math.MaxInt64 panics at run time (a *cfgError)
// where Go returns it; the explicit conversion it gets right. The conversion is the identity for
// every other expression such a return can hold (an unsigned result is assignable only from its
// own type or an untyped constant), and the type checker cannot tell which expressions are
// constants (imported packages are empty to it), so every result of those types is converted.
func (r *rewriter) unsignedReturns() {
	var walk func(n ast.Node, results *ast.FieldList)
	walk = func(n ast.Node, results *ast.FieldList) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				walk(n.Body, n.Type.Results)
				return false
			case *ast.ReturnStmt:
				want := r.resultTypes(results)
				if len(want) != len(n.Results) {
					return true
				}
				for i, e := range n.Results {
					if want[i] == "" {
						continue
					}
					r.convert(e, want[i])
				}
			case *ast.AssignStmt: // x[i] = C, m[k] = C
				if n.Tok == token.ASSIGN && len(n.Lhs) == len(n.Rhs) {
					for i, l := range n.Lhs {
						r.convert(n.Rhs[i], r.unsignedText(r.typeOf(l)))
					}
				}
			case *ast.SendStmt: // ch <- C
				if t := r.typeOf(n.Chan); t != nil {
					if ch, ok := t.Underlying().(*types.Chan); ok {
						r.convert(n.Value, r.unsignedText(ch.Elem()))
					}
				}
			}
			return true
		})
	}
	for _, d := range r.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			walk(fd.Body, fd.Type.Results)
		}
	}
}

// convert writes e as T(e) (nothing when T is ""). Both edits are closers: the opening one then
// goes before another rewrite of e that starts where e does (which would otherwise drop it and
// keep the ")").
func (r *rewriter) convert(e ast.Expr, T string) {
	if T == "" {
		return
	}
	r.addCloser(r.off(e.Pos()), T+"(")
	r.addCloser(r.off(e.End()), ")")
}

// unsignedText is t written in the file when it is an unsigned integer type, else "".
func (r *rewriter) unsignedText(t types.Type) string {
	if t == nil {
		return ""
	}
	if b, ok := t.Underlying().(*types.Basic); !ok || b.Info()&types.IsUnsigned == 0 || b.Info()&types.IsInteger == 0 {
		return ""
	}
	return r.typeString(t)
}

// resultTypes are a result list's types, one per result: the type's text for an unsigned
// integer type (its underlying type, the file's own named types included), else "".
func (r *rewriter) resultTypes(results *ast.FieldList) []string {
	if results == nil {
		return nil
	}
	var out []string
	for _, f := range results.List {
		text := ""
		if r.unsignedText(r.typeOf(f.Type)) != "" {
			text = r.text(f.Type)
		}
		for range max(1, len(f.Names)) {
			out = append(out, text)
		}
	}
	return out
}

func (r *rewriter) rewriteCall(c *ast.CallExpr) {
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		if r.declared[fn.Name] {
			return
		}
		switch fn.Name {
		case "min", "max":
			lit, whole, _, _ := r.minMax(c, fn.Name)
			switch {
			case whole != "":
				r.add(r.off(c.Pos()), r.off(c.End()), whole)
			case lit != "":
				r.add(r.off(fn.Pos()), r.off(fn.End()), lit)
			}
		case "clear":
			if len(c.Args) != 1 {
				return
			}
			t := r.typeOf(c.Args[0])
			if t == nil {
				return
			}
			ts := r.typeString(t)
			switch u := t.Underlying().(type) {
			case *types.Map:
				if mayHoldNaN(u.Key(), nil) {
					return // gapRefusal refuses it
				}
				r.add(r.off(fn.Pos()), r.off(fn.End()), fmt.Sprintf("func(m %s) { for k := range m { delete(m, k) } }", ts))
			case *types.Slice:
				r.add(r.off(fn.Pos()), r.off(fn.End()), fmt.Sprintf("func(s %s) { for i := range s { var z %s; s[i] = z } }", ts, r.typeString(t.Underlying().(*types.Slice).Elem())))
			}
		}
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		if !ok || r.imports[x.Name] != "slices" || r.declared[x.Name] || len(c.Args) == 0 {
			return
		}
		t := r.typeOf(c.Args[0])
		if t == nil {
			return
		}
		sl, ok := t.Underlying().(*types.Slice)
		if !ok {
			return
		}
		ts, es := r.typeString(t), r.typeString(sl.Elem())
		float, known := floatKind(sl.Elem())
		if !known && orderedSlicesFuncs[fn.Sel.Name] {
			return // gapRefusal refuses it
		}
		less := func(a, b string) string { return lessText(a, b, float) }
		var repl string
		switch fn.Sel.Name {
		case "Sort":
			repl = fmt.Sprintf("func(s %s) { forge__sort.Slice(s, func(i, j int) bool { return %s }) }", ts, less("s[i]", "s[j]"))
		case "SortFunc":
			repl = fmt.Sprintf("func(s %s, cmp func(a, b %s) int) { forge__sort.Slice(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 }) }", ts, es)
		case "SortStableFunc":
			repl = fmt.Sprintf("func(s %s, cmp func(a, b %s) int) { forge__sort.SliceStable(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 }) }", ts, es)
		case "IsSorted":
			repl = fmt.Sprintf("func(s %s) bool { for i := 1; i < len(s); i++ { if %s { return false } }; return true }", ts, less("s[i]", "s[i-1]"))
		case "Min", "Max":
			// As slices.Min and slices.Max: the builtin min or max over the elements, in order.
			repl = fmt.Sprintf("func(s %s) %s { if len(s) == 0 { panic(\"slices.%s: empty list\") }; m := s[0]; for _, v := range s[1:] { %s }; return m }",
				ts, es, fn.Sel.Name, minMaxStep(strings.ToLower(fn.Sel.Name), "m", "v", float, "break"))
		case "BinarySearch":
			// sort.Search's loop is slices.BinarySearch's, with cmp.Less for the predicate.
			found := "s[i] == t"
			if float {
				found = "(s[i] == t || s[i] != s[i] && t != t)"
			}
			repl = fmt.Sprintf("func(s %s, t %s) (int, bool) { i := forge__sort.Search(len(s), func(i int) bool { return !(%s) }); return i, i < len(s) && %s }", ts, es, less("s[i]", "t"), found)
		default:
			return
		}
		if strings.HasPrefix(repl, "func(s") && strings.Contains(repl, "forge__sort.") {
			r.needSort = true
		}
		r.add(r.off(fn.Pos()), r.off(fn.End()), repl)
	}
}

// orderedSlicesFuncs are the functions of package slices the rewrite replaces that order the
// elements themselves (cmp.Less): their rewrite depends on whether the elements are floats.
var orderedSlicesFuncs = map[string]bool{"Sort": true, "IsSorted": true, "Min": true, "Max": true, "BinarySearch": true}

// floatKind reports whether values of t are floating-point numbers (NaN and signed zeros order
// differently from other values), and whether that is known: a type parameter's constraint
// must list its types (~int | ~string), or its values may be floats.
func floatKind(t types.Type) (float, known bool) {
	tp, ok := t.(*types.TypeParam)
	if !ok {
		b, ok := t.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsFloat != 0, ok
	}
	iface, ok := tp.Constraint().Underlying().(*types.Interface)
	if !ok || iface.NumEmbeddeds() == 0 {
		return false, false
	}
	for i := range iface.NumEmbeddeds() {
		var terms []types.Type
		switch e := iface.EmbeddedType(i).(type) {
		case *types.Union:
			for j := range e.Len() {
				terms = append(terms, e.Term(j).Type())
			}
		default:
			terms = append(terms, e)
		}
		for _, term := range terms {
			f, k := floatKind(term)
			if !k || f {
				return f, k
			}
		}
	}
	return false, true
}

// mayHoldNaN reports whether a value of t may hold a NaN (a float or complex, in an interface,
// a struct field or an array element), which no delete can remove from a map.
func mayHoldNaN(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	if seen == nil {
		seen = map[types.Type]bool{}
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsFloat|types.IsComplex) != 0
	case *types.Interface:
		return true
	case *types.Array:
		return mayHoldNaN(u.Elem(), seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if mayHoldNaN(u.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// lessText is the Go expression for cmp.Less(a, b): for floats, a NaN is less than any other value.
func lessText(a, b string, float bool) string {
	if !float {
		return a + " < " + b
	}
	return fmt.Sprintf("%s < %s || %s != %s && %s == %s", a, b, a, a, b, b)
}

// minMaxStep is the statement that folds y into x as the builtin min (op "min") or max does:
// for floats, a NaN wins (stop ends the fold once x is one) and -0 is less than +0.
func minMaxStep(op, x, y string, float bool, stop string) string {
	cmp, sign := "<", "<"
	if op == "max" {
		cmp, sign = ">", ">"
	}
	if !float {
		return fmt.Sprintf("if %s %s %s { %s = %s }", y, cmp, x, x, y)
	}
	return fmt.Sprintf("if %s != %s { %s }; if %s != %s || %s %s %s || %s == %s && 1/%s %s 0 { %s = %s }",
		x, x, stop, y, y, y, cmp, x, y, x, y, sign, x, y)
}

// minMax returns the exact rewrite of a call c of the builtin min or max (name), which the
// interpreter lacks: a function literal to call in place of the name, or the text of the whole
// call when it is a constant (min(1, 2) -> (1), which stays a constant); or why there is none,
// with what to write instead.
func (r *rewriter) minMax(c *ast.CallExpr, name string) (lit, whole, msg, hint string) {
	if r.info == nil || len(c.Args) == 0 {
		return "", "", "", ""
	}
	if tv, ok := r.info.Types[c]; ok && tv.Value != nil {
		return r.constMinMax(c, name, tv)
	}
	var t types.Type
	var unknown ast.Expr
	for _, a := range c.Args {
		at := r.typeOf(a)
		switch b, _ := at.(*types.Basic); {
		case at == nil:
			unknown = a
		case b == nil || b.Info()&types.IsUntyped == 0:
			t = at
		}
	}
	if t == nil {
		if unknown == nil {
			unknown = c.Args[0]
		}
		return "", "", fmt.Sprintf("%s(...) of %s, whose type is not known before the interpreter runs: the interpreter has no builtin %s to give it", name, types.ExprString(unknown), name),
			fmt.Sprintf("give the operand a declared type first (var x float64 = %s) and pass x to %s", types.ExprString(unknown), name)
	}
	float, known := floatKind(t)
	if !known || float && isTypeParam(t) {
		return "", "", fmt.Sprintf("%s(...) of the type parameter %s, whose values may be floats: the interpreter has no builtin %s, and NaN and -0 need their own comparison", name, r.typeString(t), name),
			fmt.Sprintf("constrain %s to integers and strings (~int | ~string), or compare yourself: if b < a { a = b }", r.typeString(t))
	}
	ts := r.typeString(t)
	return fmt.Sprintf("func(x %s, ys ...%s) %s { for _, y := range ys { %s }; return x }", ts, ts, ts, minMaxStep(name, "x", "y", float, "break")), "", "", ""
}

func isTypeParam(t types.Type) bool {
	_, ok := t.(*types.TypeParam)
	return ok
}

// constMinMax rewrites a constant call of min or max as the argument it evaluates to, converted
// to the call's type when that is typed: T(arg), or (arg) when the argument has the call's own
// untyped type. The call must fit on one line (the rewrite adds no newline).
func (r *rewriter) constMinMax(c *ast.CallExpr, name string, tv types.TypeAndValue) (lit, whole, msg, hint string) {
	if r.fset.Position(c.Pos()).Line != r.fset.Position(c.End()).Line {
		return "", "", fmt.Sprintf("constant %s(...) written over several lines: the interpreter has no builtin %s", name, name), "write it on one line, or write the constant it gives"
	}
	b, _ := tv.Type.(*types.Basic)
	untyped := b != nil && b.Info()&types.IsUntyped != 0
	for _, a := range c.Args {
		av, ok := r.info.Types[a]
		if !ok || av.Value == nil || !constant.Compare(av.Value, token.EQL, tv.Value) {
			continue
		}
		switch {
		case !untyped:
			return "", fmt.Sprintf("%s(%s)", r.typeString(tv.Type), r.textOrEmpty(a)), "", ""
		case untypedLiteral(a, b):
			return "", "(" + r.textOrEmpty(a) + ")", "", ""
		}
	}
	return "", "", fmt.Sprintf("%s(...) of untyped constants of different kinds: the interpreter has no builtin %s", name, name),
		fmt.Sprintf("write the constant it gives, of the kind you mean (%s)", tv.Value.String())
}

// untypedLiteral reports whether e is a literal of the untyped kind t (1 for untyped int, 2.5
// for untyped float): written alone, it is a constant of the call's own kind.
func untypedLiteral(e ast.Expr, t *types.Basic) bool {
	lit, ok := ast.Unparen(e).(*ast.BasicLit)
	if !ok {
		return false
	}
	kinds := map[types.BasicKind]token.Token{types.UntypedInt: token.INT, types.UntypedFloat: token.FLOAT,
		types.UntypedString: token.STRING, types.UntypedRune: token.CHAR}
	return kinds[t.Kind()] == lit.Kind
}

// textOrEmpty is text, or "" when the rewriter has no source (gapRefusal's).
func (r *rewriter) textOrEmpty(n ast.Node) string {
	if r.src == "" {
		return types.ExprString(n.(ast.Expr))
	}
	return r.text(n)
}

func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

func (r *rewriter) rewriteRange(rs *ast.RangeStmt) {
	if t := r.typeOf(rs.X); t != nil && isInteger(t) && rs.Value == nil && rs.Tok != token.ASSIGN {
		key := "_"
		if rs.Key != nil {
			key = r.text(rs.Key)
		}
		if key == "_" {
			key = r.tmp()
		}
		n := r.tmp()
		x := r.text(rs.X)
		// As Go: x is evaluated once, and each iteration's key is its own (assigning it in the
		// body does not move the loop: the count runs in a variable of its own then).
		ts := r.typeString(t)
		if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			ts = "int"
		}
		if rs.Tok == token.DEFINE && r.assignsVar(rs.Body, rs.Key) {
			count := r.tmp()
			r.add(r.off(rs.For), r.off(rs.Body.Lbrace), fmt.Sprintf("for %s, %s := %s(0), %s(%s); %s < %s; %s++ ", count, n, ts, ts, x, count, n, count))
			r.add(r.off(rs.Body.Lbrace)+1, r.off(rs.Body.Lbrace)+1, fmt.Sprintf(" %s := %s; ", key, count))
			return
		}
		r.add(r.off(rs.For), r.off(rs.Body.Lbrace), fmt.Sprintf("for %s, %s := %s(0), %s(%s); %s < %s; %s++ ", key, n, ts, ts, x, key, n, key))
	}
	if rs.Tok == token.DEFINE {
		var names []string
		for _, e := range []ast.Expr{rs.Key, rs.Value} {
			if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
				names = append(names, id.Name)
			}
		}
		r.copyLoopVars(rs.Body, names, false)
	}
}

// assignsVar reports whether body assigns the variable id declares (=, op=, ++, --) or takes
// its address.
func (r *rewriter) assignsVar(body *ast.BlockStmt, id ast.Expr) bool {
	key, ok := id.(*ast.Ident)
	if !ok || r.info == nil || r.info.Defs[key] == nil {
		return false
	}
	obj := r.info.Defs[key]
	is := func(e ast.Expr) bool {
		x, ok := ast.Unparen(e).(*ast.Ident)
		return ok && r.info.Uses[x] == obj
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, l := range n.Lhs {
					found = found || is(l)
				}
			}
		case *ast.IncDecStmt:
			found = found || is(n.X)
		case *ast.UnaryExpr:
			found = found || n.Op == token.AND && is(n.X)
		case *ast.RangeStmt:
			found = found || n.Tok == token.ASSIGN && (is(n.Key) || n.Value != nil && is(n.Value))
		}
		return !found
	})
	return found
}

func (r *rewriter) rewriteFor(fs *ast.ForStmt) {
	as, ok := fs.Init.(*ast.AssignStmt)
	if !ok || as.Tok != token.DEFINE {
		return
	}
	var names []string
	for _, e := range as.Lhs {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			names = append(names, id.Name)
		}
	}
	r.copyLoopVars(fs.Body, names, true)
}

// copyLoopVars gives a loop body its own copy of the loop variables (Go 1.22 semantics) when a
// closure in it captures one. In a three-clause loop a variable the body assigns is left alone:
// the copy would hide the assignment from the loop's post statement.
func (r *rewriter) copyLoopVars(body *ast.BlockStmt, names []string, threeClause bool) {
	if len(names) == 0 {
		return
	}
	captured, assigned := r.loopUses(body)
	var copies []string
	for _, name := range names {
		if captured[name] && !(threeClause && assigned[name]) {
			copies = append(copies, name)
		}
	}
	if len(copies) == 0 {
		return
	}
	sort.Strings(copies)
	list := strings.Join(copies, ", ")
	r.add(r.off(body.Lbrace)+1, r.off(body.Lbrace)+1, fmt.Sprintf(" %s := %s; ", list, list))
}

// loopUses returns the names a loop body captures (in a closure, by &name or by a pointer
// method value) and the names it assigns.
func (r *rewriter) loopUses(body *ast.BlockStmt) (captured, assigned map[string]bool) {
	captured, assigned = map[string]bool{}, map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n.Body, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok {
					captured[id.Name] = true
				}
				return true
			})
			return false
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok {
					assigned[id.Name] = true
				}
			}
		case *ast.IncDecStmt:
			if id, ok := n.X.(*ast.Ident); ok {
				assigned[id.Name] = true
			}
		case *ast.UnaryExpr:
			if id, ok := n.X.(*ast.Ident); ok && n.Op == token.AND {
				captured[id.Name] = true
			}
		case *ast.SelectorExpr:
			// A pointer method value (b.get, get on *box) binds &b (methodValues).
			if id, ok := n.X.(*ast.Ident); ok && r.info != nil && r.info.Selections != nil {
				if s, ok := r.info.Selections[n]; ok && s.Kind() == types.MethodVal && !s.Indirect() {
					if _, ptr := s.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer); ptr {
						captured[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return captured, assigned
}

// apply returns the source with every edit applied and tail appended.
func (r *rewriter) apply(tail string) string {
	sort.SliceStable(r.edits, func(i, j int) bool {
		if r.edits[i].pos != r.edits[j].pos {
			return r.edits[i].pos < r.edits[j].pos
		}
		return r.edits[i].closer && !r.edits[j].closer
	})
	var b strings.Builder
	last := 0
	for _, e := range r.edits {
		if e.pos < last {
			continue // overlapping edit (nested rewrite): keep the outer one
		}
		b.WriteString(r.src[last:e.pos])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(r.src[last:])
	b.WriteString("\n")
	b.WriteString(tail)
	return b.String()
}

// globals is the tail every rewritten file shares (only the first file of a package declares it).
const globals = "var forge__depth int\nvar forge__maxDepth = 10000\n"

// Interpreter gaps found by running valid Go on both backends (sandbox/testdata/*/gap_*): what a
// rewrite below cannot make give wasm's answer is refused before the interpreter (gapRefusal)
// with the construct, its line and what to write instead.

// loopDecl reports whether obj is a variable declared inside loop (its header or body): each
// iteration has its own (Go 1.22).
func loopDecl(obj types.Object, loop ast.Node) bool {
	v, ok := obj.(*types.Var)
	return ok && !v.IsField() && v.Pos() >= loop.Pos() && v.Pos() < loop.End()
}

// deferredLiterals calls fn for every `defer func(...) {...}(...)` inside a loop, with the
// outermost loop around it. Deferred calls of a function literal run, in yaegi v0.16.1, with the
// values the variables have when the function returns, not the ones of the iteration that
// deferred them: `for _, w := range ws { defer func() { s += w }() }` gives "bb", not "ba".
func deferredLiterals(f *ast.File, fn func(d *ast.DeferStmt, lit *ast.FuncLit, loop ast.Node)) {
	seen := map[*ast.DeferStmt]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
		default:
			return true
		}
		loop := n
		ast.Inspect(loop, func(m ast.Node) bool {
			d, ok := m.(*ast.DeferStmt)
			if !ok || seen[d] {
				return true
			}
			seen[d] = true
			if lit, ok := d.Call.Fun.(*ast.FuncLit); ok {
				fn(d, lit, loop)
			}
			return true
		})
		return true
	})
}

// loopCaptures returns the variables declared in loop that lit uses (in order of first use), and
// the first of them lit assigns or takes the address of (passing a copy would change its meaning).
func (r *rewriter) loopCaptures(lit *ast.FuncLit, loop ast.Node) (vars []*types.Var, idents []*ast.Ident, written *ast.Ident) {
	if r.info == nil || r.info.Uses == nil {
		return nil, nil, nil
	}
	seen := map[types.Object]bool{}
	var targets []ast.Expr
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			obj := r.info.Uses[n]
			if obj != nil && !seen[obj] && loopDecl(obj, loop) && !(obj.Pos() >= lit.Pos() && obj.Pos() < lit.End()) {
				seen[obj] = true
				vars = append(vars, obj.(*types.Var))
				idents = append(idents, n)
			}
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				targets = append(targets, n.Lhs...)
			}
		case *ast.IncDecStmt:
			targets = append(targets, n.X)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				targets = append(targets, n.X)
			}
		}
		return true
	})
	for _, t := range targets {
		if id, ok := ast.Unparen(t).(*ast.Ident); ok && seen[r.info.Uses[id]] && written == nil {
			written = id
		}
	}
	return vars, idents, written
}

// spell is typeString for a type the file can write: false when the type check could not resolve
// part of it (a package's type: the importer here knows no package's contents).
func (r *rewriter) spell(t types.Type) (string, bool) {
	s := r.typeString(t)
	return s, !strings.Contains(s, "invalid type")
}

// deferArgs hands the loop's variables a deferred function literal uses to it as arguments,
// evaluated when the defer statement runs, as Go evaluates them for each iteration:
//
//	defer func() { s += w }()   ->   defer func(w string) { s += w }(w)
//
// What cannot be passed (a variable the literal assigns, a type the file cannot spell, unnamed
// parameters) is refused by gapRefusal.
func (r *rewriter) deferArgs() {
	deferredLiterals(r.file, func(d *ast.DeferStmt, lit *ast.FuncLit, loop ast.Node) {
		vars, _, written := r.loopCaptures(lit, loop)
		if len(vars) == 0 || written != nil || unnamedParams(lit) {
			return
		}
		var params, args []string
		for _, v := range vars {
			ts, ok := r.spell(v.Type())
			if !ok {
				return
			}
			params = append(params, v.Name()+" "+ts+", ")
			args = append(args, v.Name()+", ")
		}
		r.add(r.off(lit.Type.Params.Opening)+1, r.off(lit.Type.Params.Opening)+1, strings.Join(params, ""))
		r.add(r.off(d.Call.Lparen)+1, r.off(d.Call.Lparen)+1, strings.Join(args, ""))
	})
}

func unnamedParams(lit *ast.FuncLit) bool {
	for _, f := range lit.Type.Params.List {
		if len(f.Names) == 0 {
			return true
		}
	}
	return false
}

// methodExprCalls rewrites a method expression called on the spot into the method call, which
// the interpreter runs (it cannot call method expressions: `(*strings.Builder).String(&b)` panics
// "reflect: Method index out of range", `(*T).M` of the file's own types fails to assign):
//
//	(*strings.Builder).String(&b)   ->   (&b).String()
//	T.Scale(v, 2)                   ->   (v).Scale(2)
//
// Methods other rewrites route (guestZone, guardStderr) are left to them.
func (r *rewriter) methodExprCalls() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) == 0 || c.Ellipsis.IsValid() {
			return true
		}
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok || !r.methodExpr(sel) || routedMethods[sel.Sel.Name] {
			return true
		}
		recv := c.Args[0]
		// From the call's start to the first argument's start: "(*T).M(" becomes "(";
		// the receiver is followed by ").M(" and its comma is dropped.
		r.add(r.off(c.Pos()), r.off(recv.Pos()), "("+newlines(r.src[r.off(c.Pos()):r.off(recv.Pos())]))
		rest := ""
		if len(c.Args) > 1 {
			rest = newlines(r.src[r.off(recv.End()):r.off(c.Args[1].Pos())])
			r.add(r.off(recv.End()), r.off(c.Args[1].Pos()), ")."+sel.Sel.Name+"("+rest)
		} else {
			r.add(r.off(recv.End()), r.off(recv.End()), ")."+sel.Sel.Name+"(")
		}
		return true
	})
}

// routedMethods are methods whose calls other rewrites route through helpers (guestZone,
// guardStderr): their method expressions are theirs.
var routedMethods = map[string]bool{"Local": true, "UnmarshalJSON": true, "UnmarshalText": true,
	"UnmarshalBinary": true, "GobDecode": true, "Init": true}

// methodExpr reports whether sel is a method expression T.M or (*T).M: T a type of the file or a
// package's type (a nil pointer in its symbol table: a package's variable, base64.StdEncoding,
// is addressable).
func (r *rewriter) methodExpr(sel *ast.SelectorExpr) bool {
	if r.info != nil && r.info.Selections != nil {
		if s, ok := r.info.Selections[sel]; ok {
			return s.Kind() == types.MethodExpr
		}
	}
	x := ast.Unparen(sel.X)
	if st, ok := x.(*ast.StarExpr); ok {
		x = ast.Unparen(st.X)
	}
	switch x := x.(type) {
	case *ast.SelectorExpr:
		if !r.packageSelector(x) {
			return false
		}
		table := symbols.Symbols[tableKeys[r.imports[x.X.(*ast.Ident).Name]]]
		v, ok := table[x.Sel.Name]
		return ok && v.Kind() == reflect.Pointer && v.IsNil() && !v.CanAddr()
	case *ast.Ident:
		if r.info == nil {
			return false
		}
		tv, ok := r.info.Types[x]
		return ok && tv.IsType()
	}
	return false
}

// gapRefusal returns the first construct of the file the interpreter would compile to a
// different answer than Go, or fail on without saying why, and no rewrite covers.
func gapRefusal(fset *token.FileSet, f *ast.File, info *types.Info) *sandbox.Error {
	r := newRewriter(fset, f, "", info)
	var first *sandbox.Error
	refuse := func(n ast.Node, msg, hint string) {
		if first == nil {
			pos := fset.Position(n.Pos())
			first = &sandbox.Error{Kind: sandbox.KindCompile, Line: pos.Line, Message: fmt.Sprintf("%d:%d: %s", pos.Line, pos.Column, msg), Hint: hint}
		}
	}
	deferredLiterals(f, func(d *ast.DeferStmt, lit *ast.FuncLit, loop ast.Node) {
		vars, idents, written := r.loopCaptures(lit, loop)
		if len(vars) == 0 {
			return
		}
		if written != nil {
			refuse(written, fmt.Sprintf("a deferred function literal in a loop assigns the loop's variable %s: the interpreter runs it with the last iteration's %s, not its own", written.Name, written.Name),
				"assign a variable declared before the loop, or defer a call that takes the value as an argument")
			return
		}
		for i, v := range vars {
			if _, ok := r.spell(v.Type()); !ok || unnamedParams(lit) {
				refuse(idents[i], fmt.Sprintf("a deferred function literal in a loop uses the loop's variable %s: the interpreter runs it with the last iteration's %s, not its own", v.Name(), v.Name()),
					fmt.Sprintf("pass it as an argument: defer func(%s T) { ... }(%s)", v.Name(), v.Name()))
				return
			}
		}
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if arg, verb := r.fieldNameVerb(c); arg != nil {
				refuse(arg, fmt.Sprintf("%%%s of %s, a struct type of the file: the interpreter prints its own field and type names (Xname, struct { ... })", verb, types.ExprString(arg)),
					"format the fields yourself (fmt.Sprintf(\"{x:%v y:%v}\", p.x, p.y)) or use %v")
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if arg, inner := r.nestedMethodArg(c); arg != nil {
				refuse(arg, fmt.Sprintf("fmt prints %s, which holds values of %s: the interpreter prints them without their String or Error method", types.ExprString(arg), inner),
					fmt.Sprintf("format them yourself: call String() on each %s (a loop and strings.Join)", inner))
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if msg, hint, at := r.nativeInterfaceGap(n); msg != "" {
			refuse(at, msg, hint)
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if msg, hint, at := r.builtinGap(n); msg != "" {
			refuse(at, msg, hint)
		}
		return true
	})
	if at, msg, hint := r.embeddedGap(); at != nil {
		refuse(at, msg, hint)
	}
	r.nilInterfaceGaps(refuse)
	rewritten := map[*ast.SelectorExpr]bool{} // method expressions methodExprCalls rewrites
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) > 0 && !c.Ellipsis.IsValid() {
			if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok {
				rewritten[sel] = true
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			as, ok := n.Init.(*ast.AssignStmt)
			if !ok || as.Tok != token.DEFINE {
				return true
			}
			captured, assigned := r.loopUses(n.Body)
			for _, e := range as.Lhs {
				if id, ok := e.(*ast.Ident); ok && id.Name != "_" && captured[id.Name] && assigned[id.Name] && r.capturesObject(n.Body, id) {
					refuse(n, fmt.Sprintf("a closure (or &%s) in this loop captures the loop variable %s, which the loop body also assigns: the interpreter shares one %s across iterations", id.Name, id.Name, id.Name),
						fmt.Sprintf("copy it first (%s := %s) and let the closure use the copy, or loop with a variable declared before the loop", "v", id.Name))
				}
			}
		case *ast.RangeStmt:
			if t := r.typeOf(n.X); t != nil {
				if _, ok := t.Underlying().(*types.Signature); ok {
					refuse(n, fmt.Sprintf("range over the function %s: the interpreter has no range-over-func iterators", types.ExprString(n.X)),
						"return a slice (or call the function with a yield callback of your own) and range over that")
				}
			}
		case *ast.SelectorExpr:
			if !rewritten[n] && r.methodExpr(n) && !routedMethods[n.Sel.Name] {
				refuse(n, fmt.Sprintf("method expression %s used as a value: the interpreter cannot call method expressions", types.ExprString(n)),
					fmt.Sprintf("call the method on the value (x.%s(...)) or write a function literal: func(x %s, ...) ... { return x.%s(...) }", n.Sel.Name, types.ExprString(ast.Unparen(n.X)), n.Sel.Name))
			}
		}
		return true
	})
	return first
}

// builtinGap returns why a call of min, max or clear, or of a slices function that orders the
// elements itself, has no exact rewrite (see minMax, floatKind), and where.
func (r *rewriter) builtinGap(n ast.Node) (msg, hint string, at ast.Node) {
	c, ok := n.(*ast.CallExpr)
	if !ok || r.info == nil {
		return "", "", nil
	}
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		if r.declared[fn.Name] || r.info.Uses[fn] == nil || r.info.Uses[fn].Parent() != types.Universe {
			return "", "", nil
		}
		switch fn.Name {
		case "min", "max":
			_, _, msg, hint := r.minMax(c, fn.Name)
			return msg, hint, c
		case "clear":
			if len(c.Args) != 1 {
				break
			}
			t := r.typeOf(c.Args[0])
			if t == nil {
				return fmt.Sprintf("clear(%s), whose type is not known before the interpreter runs: the interpreter has no builtin clear", types.ExprString(c.Args[0])),
					"delete the keys in a loop (for k := range m { delete(m, k) }) or zero the elements in a loop", c
			}
			if m, ok := t.Underlying().(*types.Map); ok && mayHoldNaN(m.Key(), nil) {
				return fmt.Sprintf("clear(%s), a map whose keys may be NaN: the interpreter has no builtin clear, and delete cannot remove a NaN key", types.ExprString(c.Args[0])),
					"make a new map (m = map[K]V{}) where the old one is no longer shared, or keep NaN out of the keys", c
			}
		}
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		if !ok || r.imports[x.Name] != "slices" || r.declared[x.Name] || !orderedSlicesFuncs[fn.Sel.Name] || len(c.Args) == 0 {
			return "", "", nil
		}
		if t := r.typeOf(c.Args[0]); t != nil {
			if sl, ok := t.Underlying().(*types.Slice); ok {
				if _, known := floatKind(sl.Elem()); !known {
					return fmt.Sprintf("slices.%s of a slice of %s, a type parameter whose values may be floats: the interpreter's slices.%s orders NaN and -0 differently from Go", fn.Sel.Name, r.typeString(sl.Elem()), fn.Sel.Name),
						fmt.Sprintf("constrain %s to integers and strings (~int | ~string), or call slices.%sFunc with a comparison of your own", r.typeString(sl.Elem()), strings.TrimSuffix(fn.Sel.Name, "Search")), c
				}
			}
		}
	}
	return "", "", nil
}

// embeddedGap returns the first field of a struct type of the file that embeds another type of
// the file (a package's type embeds as Go does) and whose values go through encoding/json: the interpreter's reflection names the field X<Type> and does not
// promote its fields, so json.Marshal writes {"Xbase":{...}} for Go's {"id":...} (and decoding
// leaves the promoted fields unset). A value goes through encoding/json when the file imports
// it, or when its type is reachable from an exported function's parameters or results (the
// sandbox decodes args and encodes results with encoding/json).
func (r *rewriter) embeddedGap() (at ast.Node, msg, hint string) {
	if r.info == nil {
		return nil, "", ""
	}
	_, usesJSON := r.importNamed("encoding/json")
	reached := map[types.Type]bool{}
	var reach func(t types.Type)
	reach = func(t types.Type) {
		if t == nil || reached[t] {
			return
		}
		reached[t] = true
		switch u := t.Underlying().(type) {
		case *types.Pointer:
			reach(u.Elem())
		case *types.Slice:
			reach(u.Elem())
		case *types.Array:
			reach(u.Elem())
		case *types.Map:
			reach(u.Key())
			reach(u.Elem())
		case *types.Struct:
			for i := range u.NumFields() {
				reach(u.Field(i).Type())
			}
		}
	}
	for _, d := range r.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
			if obj, ok := r.info.Defs[fd.Name].(*types.Func); ok {
				sig := obj.Type().(*types.Signature)
				for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
					for i := range tup.Len() {
						reach(tup.At(i).Type())
					}
				}
			}
		}
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || at != nil {
			return at == nil
		}
		st, ok := ts.Type.(*ast.StructType)
		obj := r.info.Defs[ts.Name]
		if !ok || obj == nil || !usesJSON && !reached[obj.Type()] {
			return true
		}
		for _, fl := range st.Fields.List {
			if emb := types.ExprString(fl.Type); len(fl.Names) == 0 && r.typeNames[strings.TrimPrefix(emb, "*")] {
				at, msg = fl, fmt.Sprintf("struct %s embeds %s and its values go through encoding/json (json.Marshal, or the function's args and result): the interpreter encodes the embedded field as one named X%s instead of promoting its fields", ts.Name.Name, emb, strings.TrimPrefix(emb, "*"))
				hint = fmt.Sprintf("write %s's fields out in %s instead of embedding %s", strings.TrimPrefix(emb, "*"), ts.Name.Name, emb)
				return false
			}
		}
		return true
	})
	return at, msg, hint
}

// importNamed returns the local name of the file's import of path.
func (r *rewriter) importNamed(path string) (string, bool) {
	for name, p := range r.imports {
		if p == path {
			return name, true
		}
	}
	return "", false
}

// nilInterfaceGaps refuses every place the file turns a value of a concrete type that may be
// nil (a pointer, slice, map, channel or function) into an interface with methods (error, an
// interface of the file): the interpreter makes a nil value a nil interface, so `err != nil`
// answers false where Go answers true (a nil *T returned as error). The places checked are
// return statements, assignments and declarations, conversions, calls of the file's functions
// and composite literals; a value built on the spot (&T{...}, new(T), make, a literal) is never
// nil and passes.
func (r *rewriter) nilInterfaceGaps(refuse func(n ast.Node, msg, hint string)) {
	if r.info == nil {
		return
	}
	nonNil := r.nonNilVars()
	check := func(e ast.Expr, to types.Type) {
		if to == nil || e == nil {
			return
		}
		iface, ok := to.Underlying().(*types.Interface)
		if !ok || iface.NumMethods() == 0 || isTypeParam(to) || mustBeNonNil(e) || nonNil[r.varOf(e)] {
			return
		}
		from := r.typeOf(e)
		if from == nil || isTypeParam(from) {
			return
		}
		switch from.Underlying().(type) {
		case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature:
		default:
			return
		}
		if tv := r.info.Types[e]; tv.IsNil() {
			return
		}
		ft, it := r.typeString(from), r.typeString(to)
		refuse(e, fmt.Sprintf("%s, a %s, becomes a %s here: the interpreter turns a nil %s into a nil %s, so a comparison with nil answers differently from Go", types.ExprString(e), ft, it, ft, it),
			fmt.Sprintf("keep the concrete type (declare the result, variable or parameter as %s), or build the value where it becomes a %s (&T{...}), and write nil itself where there is none", ft, it))
	}
	var sigs []*types.Signature // enclosing functions' signatures, innermost last
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			var sig *types.Signature
			if fd, ok := n.(*ast.FuncDecl); ok {
				if obj, ok := r.info.Defs[fd.Name].(*types.Func); ok {
					sig, _ = obj.Type().(*types.Signature)
				}
			} else {
				sig, _ = r.typeOf(n.(*ast.FuncLit)).(*types.Signature)
			}
			sigs = append(sigs, sig)
			for _, c := range childNodes(n) {
				ast.Inspect(c, walk)
			}
			sigs = sigs[:len(sigs)-1]
			return false
		case *ast.ReturnStmt:
			if len(sigs) > 0 && sigs[len(sigs)-1] != nil {
				res := sigs[len(sigs)-1].Results()
				if res.Len() == len(n.Results) {
					for i, e := range n.Results {
						check(e, res.At(i).Type())
					}
				}
			}
		case *ast.AssignStmt:
			if n.Tok == token.ASSIGN && len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					check(n.Rhs[i], r.typeOf(l))
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil && len(n.Values) == len(n.Names) {
				for _, v := range n.Values {
					check(v, r.typeOf(n.Type))
				}
			}
		case *ast.CallExpr:
			if tv, ok := r.info.Types[n.Fun]; ok && tv.IsType() && len(n.Args) == 1 {
				check(n.Args[0], tv.Type)
			} else if sig, ok := r.typeOf(n.Fun).(*types.Signature); ok {
				for i, a := range n.Args {
					switch {
					case i < sig.Params().Len()-1 || !sig.Variadic() && i < sig.Params().Len():
						check(a, sig.Params().At(i).Type())
					case sig.Variadic() && !n.Ellipsis.IsValid():
						check(a, sig.Params().At(sig.Params().Len()-1).Type().(*types.Slice).Elem())
					}
				}
			}
		case *ast.CompositeLit:
			t := r.typeOf(n)
			if t == nil {
				break
			}
			for i, el := range n.Elts {
				v := el
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					v = kv.Value
				}
				switch u := t.Underlying().(type) {
				case *types.Slice:
					check(v, u.Elem())
				case *types.Array:
					check(v, u.Elem())
				case *types.Map:
					check(v, u.Elem())
				case *types.Struct:
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok {
							if f, ok := r.info.Uses[id].(*types.Var); ok {
								check(v, f.Type())
							}
						}
					} else if i < u.NumFields() {
						check(v, u.Field(i).Type())
					}
				}
			}
		}
		return true
	}
	ast.Inspect(r.file, walk)
}

// nonNilVars returns the variables of the file that are never nil: declared with a value built
// on the spot (d := &T{...}, var s = make(...)) and never assigned again nor addressed.
func (r *rewriter) nonNilVars() map[*types.Var]bool {
	built := map[*types.Var]bool{}
	changed := map[*types.Var]bool{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				if v, ok := r.info.Defs[id].(*types.Var); ok && n.Tok == token.DEFINE && len(n.Lhs) == len(n.Rhs) && mustBeNonNil(n.Rhs[i]) {
					built[v] = true
				} else if v := r.varOf(id); v != nil {
					changed[v] = true
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if v, ok := r.info.Defs[id].(*types.Var); ok && len(n.Values) == len(n.Names) && mustBeNonNil(n.Values[i]) {
					built[v] = true
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if v := r.varOf(n.X); v != nil {
					changed[v] = true
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if v := r.varOf(e); v != nil {
						changed[v] = true
					}
				}
			}
		}
		return true
	})
	for v := range changed {
		delete(built, v)
	}
	return built
}

// varOf returns the variable e names, if it is an identifier of one.
func (r *rewriter) varOf(e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := r.info.Uses[id].(*types.Var)
	return v
}

// childNodes returns a function's type and body, for walking them inside it.
func childNodes(n ast.Node) []ast.Node {
	switch n := n.(type) {
	case *ast.FuncDecl:
		if n.Body == nil {
			return []ast.Node{n.Type}
		}
		return []ast.Node{n.Type, n.Body}
	case *ast.FuncLit:
		return []ast.Node{n.Type, n.Body}
	}
	return nil
}

// mustBeNonNil reports whether e is a value built on the spot, which is never nil: &x, a
// composite or function literal, new(T), make(...).
func mustBeNonNil(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		return e.Op == token.AND
	case *ast.CompositeLit, *ast.FuncLit:
		return true
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok {
			return id.Name == "new" || id.Name == "make"
		}
	}
	return false
}

// methodValues binds the receiver of a method value of the file's own types when the value is
// taken, as Go does: the interpreter reads the receiver variable when the value is called
// (b := box{1}; f := b.get; b.v = 2; f() gives 2, not 1; in a loop every value sees the last
// iteration's receiver). The value becomes a closure over a parameter, which the interpreter
// binds correctly:
//
//	b.get   ->   func(forge__recv box) func() int { return func() int { return forge__recv.get() } }(b)
//
// A pointer method of an addressable value binds its address (&b), a value method through a
// pointer copies what it points to (*p), as Go does. A method value of
// a package's type (unresolved here) is left alone: the interpreter binds those through reflect.
func (r *rewriter) methodValues() {
	if r.info == nil || r.info.Selections == nil {
		return
	}
	called := map[ast.Expr]bool{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			called[ast.Unparen(c.Fun)] = true
		}
		return true
	})
	ast.Inspect(r.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || called[sel] {
			return true
		}
		s, ok := r.info.Selections[sel]
		if !ok || s.Kind() != types.MethodVal || routedMethods[sel.Sel.Name] {
			return true
		}
		sig, ok := s.Type().(*types.Signature)
		recvT := r.typeOf(sel.X)
		if !ok || recvT == nil || strings.Contains(r.text(sel), "\n") {
			return true
		}
		recv := r.text(sel.X)
		_, recvPtr := s.Obj().Type().(*types.Signature).Recv().Type().Underlying().(*types.Pointer)
		ptrT, isPtr := recvT.Underlying().(*types.Pointer)
		switch {
		case recvPtr && !isPtr && !types.IsInterface(recvT):
			recvT, recv = types.NewPointer(recvT), "&("+recv+")"
		case !recvPtr && isPtr:
			recvT, recv = ptrT.Elem(), "*("+recv+")" // a value method through a pointer copies *p now
		}
		rt, ok := r.spell(recvT)
		if !ok {
			return true
		}
		ft, ok := r.spell(sig)
		if !ok {
			return true
		}
		var params, args []string
		for i := 0; i < sig.Params().Len(); i++ {
			t := sig.Params().At(i).Type()
			name := fmt.Sprintf("forge__a%d", i)
			ts := r.typeString(t) // spelled: ft is
			if sig.Variadic() && i == sig.Params().Len()-1 {
				ts = "..." + r.typeString(t.(*types.Slice).Elem())
				name += "..."
				params = append(params, strings.TrimSuffix(name, "...")+" "+ts)
			} else {
				params = append(params, name+" "+ts)
			}
			args = append(args, name)
		}
		res := ft[len(sigParamsPrefix(ft)):] // " int", " (int, error)" or ""
		call := "forge__recv." + sel.Sel.Name + "(" + strings.Join(args, ", ") + ")"
		if sig.Results().Len() > 0 {
			call = "return " + call
		}
		r.add(r.off(sel.Pos()), r.off(sel.End()), fmt.Sprintf("func(forge__recv %s) %s { return func(%s)%s { %s } }(%s)", rt, ft, strings.Join(params, ", "), res, call, recv))
		return true
	})
}

// sigParamsPrefix returns the "func(...)" part of a function type's text (up to the parameter
// list's closing parenthesis).
func sigParamsPrefix(ft string) string {
	depth := 0
	for i, c := range ft {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return ft[:i+1]
			}
		}
	}
	return ft
}

// constIota fixes constant groups with a spec of several names, where the interpreter counts iota
// per name instead of per spec (a, b = iota+1, iota+2; c, d gives 3, 4, not 2, 3) and reports an
// implicit repetition as "constant definition loop". In such a group every spec's values are
// written out, with iota replaced by the spec's index, as the Go specification defines them:
//
//	const (                               const (
//		a, b = iota + 1, iota + 2    ->      a, b = 0 + 1, 0 + 2
//		c, d                                 c, d = 1 + 1, 1 + 2
//	)                                     )
func (r *rewriter) constIota() {
	if r.declared["iota"] {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		g, ok := n.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			return true
		}
		multi := false
		for _, s := range g.Specs {
			multi = multi || len(s.(*ast.ValueSpec).Names) > 1
		}
		if !multi {
			return true
		}
		var last *ast.ValueSpec
		for i, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Values) > 0 {
				last = vs
			}
			if last == nil {
				continue
			}
			values := r.withIota(last.Values, i)
			if vs == last {
				r.add(r.off(vs.Values[0].Pos()), r.off(vs.Values[len(vs.Values)-1].End()), values)
				continue
			}
			text := ""
			if last.Type != nil {
				text = " " + r.text(last.Type)
			}
			text += " = " + values
			if vs.Type != nil || strings.Contains(text, "\n") {
				continue
			}
			end := r.off(vs.Names[len(vs.Names)-1].End())
			r.add(end, end, text)
		}
		return false
	})
}

// withIota returns the text of values with every iota replaced by i (newlines kept).
func (r *rewriter) withIota(values []ast.Expr, i int) string {
	start, end := r.off(values[0].Pos()), r.off(values[len(values)-1].End())
	var b strings.Builder
	last := start
	for _, v := range values {
		ast.Inspect(v, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
				b.WriteString(r.src[last:r.off(id.Pos())])
				b.WriteString(strconv.Itoa(i))
				last = r.off(id.End())
			}
			return true
		})
	}
	b.WriteString(r.src[last:end])
	return b.String()
}

// fmtMethods calls the Error or String method of a print argument whose static type is one of
// the file's types: the interpreter hands fmt the bare value, whose methods native code cannot
// see (fmt.Sprint(tag(3)) gave "3", not what tag's String returns; a value held in an error or
// fmt.Stringer variable is seen). The argument becomes the method's result, for the verbs Go
// formats through the method (%v %s %q %x %X, and the Print and Sprint functions); %#v and the
// other verbs are left alone:
//
//	fmt.Sprintf("%v=%d", t, t)   ->   fmt.Sprintf("%v=%d", (t).String(), t)
//
// A pointer is checked for nil first ("<nil>", as fmt prints a nil pointer whose method would
// panic). A format that is not a literal, or uses * or [n], is left alone.
func (r *rewriter) fmtMethods() {
	if r.info == nil {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || c.Ellipsis.IsValid() {
			return true
		}
		name, first, verbs, ok := r.fmtArgVerbs(c)
		if !ok {
			return true
		}
		prevRewritten := false
		for i, v := range verbs {
			k := first + i
			if k >= len(c.Args) {
				break
			}
			arg := c.Args[k]
			// Sprint puts a space between operands when neither is a string: an operand turned
			// into a string next to a non-string gets that space written out.
			space := spaced[name] && k > first && !r.stringArg(c.Args, k-1) && !r.stringArg(c.Args, k)
			repl := r.fmtMethodArg(arg, v)
			if spaced[name] && repl != "" && (r.typeOf(c.Args[max(k-1, first)]) == nil || k+1 < len(c.Args) && r.typeOf(c.Args[k+1]) == nil) {
				repl = "" // a neighbour of unknown type: whether Sprint spaces them is not known here
			}
			switch {
			case repl != "" && space:
				r.add(r.off(arg.Pos()), r.off(arg.End()), `" ", `+repl)
			case repl != "":
				r.add(r.off(arg.Pos()), r.off(arg.End()), repl)
			case prevRewritten && space:
				r.add(r.off(arg.Pos()), r.off(arg.Pos()), `" ", `)
			}
			prevRewritten = repl != ""
		}
		return true
	})
}

// fmtMethodArg returns the replacement of a print argument formatted with verb: its Error or
// String method's result when its type is one of the file's types, else "".
func (r *rewriter) fmtMethodArg(arg ast.Expr, verb byte) string {
	t := r.typeOf(arg)
	if !strings.ContainsRune("vsqxX", rune(verb)) || t == nil || strings.Contains(r.text(arg), "\n") {
		return ""
	}
	method := fileMethod(t, "Error")
	if method == "" {
		method = fileMethod(t, "String")
	}
	if method == "" {
		return ""
	}
	if _, ptr := t.Underlying().(*types.Pointer); ptr {
		ts, ok := r.spell(t)
		if !ok {
			return ""
		}
		return fmt.Sprintf("func(forge__v %s) string { if forge__v == nil { return \"<nil>\" }; return forge__v.%s() }(%s)", ts, method, r.text(arg))
	}
	return "(" + r.text(arg) + ")." + method + "()"
}

// spaced are the print functions that put a space between operands when neither is a string.
var spaced = map[string]bool{"Print": true, "Sprint": true, "Fprint": true, "Append": true}

// stringArg reports whether args[i] is a string.
func (r *rewriter) stringArg(args []ast.Expr, i int) bool {
	t := r.typeOf(args[i])
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// fileMethod returns name when t (not an interface) is, or points to, a type the file declares
// and its method set has name() string.
func fileMethod(t types.Type, name string) string {
	if types.IsInterface(t) {
		return ""
	}
	nt := t
	if p, ok := t.Underlying().(*types.Pointer); ok {
		nt = p.Elem()
	}
	named, ok := types.Unalias(nt).(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "artifact" {
		return ""
	}
	obj, _, _ := types.LookupFieldOrMethod(t, false, nil, name)
	f, ok := obj.(*types.Func)
	if !ok {
		return ""
	}
	sig := f.Type().(*types.Signature)
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 || !types.Identical(sig.Results().At(0).Type(), types.Typ[types.String]) {
		return ""
	}
	return name
}

// formatVerbs returns the verb of each argument of a Printf format, false when the format uses
// argument indexes or * (the verbs then do not follow the arguments one by one).
func formatVerbs(format string) ([]byte, bool) {
	var verbs []byte
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		sharp := false
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			sharp = sharp || format[i] == '#'
			i++
		}
		if i >= len(format) {
			break
		}
		switch format[i] {
		case '%':
			continue
		case '*', '[':
			return nil, false
		}
		if sharp {
			verbs = append(verbs, '#') // %#v is GoString's, %#x formats the value: not a method verb
			continue
		}
		verbs = append(verbs, format[i])
	}
	return verbs, true
}

// hideUnexported tags every unexported named field of the file's struct types json:"-". The
// interpreter builds its structs with every field exported (count becomes Xcount), so
// encoding/json wrote and read them (json.Marshal(item{Name: "a", count: 2}) gave
// {"Name":"a","Xcount":2}, and a result or argument of that type carried them too); Go never
// encodes an unexported field, so the tag changes nothing Go does. The tag goes first: the json
// key Go reads is the first. Embedded fields are left alone (Go promotes an embedded unexported
// struct's exported fields).
func (r *rewriter) hideUnexported() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 || f.Names[0].IsExported() || f.Names[0].Name == "_" {
				continue
			}
			switch {
			case f.Tag == nil:
				r.add(r.off(f.Type.End()), r.off(f.Type.End()), " `json:\"-\"`")
			case strings.HasPrefix(f.Tag.Value, "`"):
				r.add(r.off(f.Tag.Pos())+1, r.off(f.Tag.Pos())+1, `json:"-" `)
			default:
				r.add(r.off(f.Tag.Pos())+1, r.off(f.Tag.Pos())+1, `json:\"-\" `)
			}
		}
		return true
	})
}

// fieldNameVerb returns the first argument of a Printf-style call of fmt printed with %+v, %#v
// or %T whose type is (or points to) a struct type of the file without an Error or String
// method: those verbs print field or type names, which the interpreter renames.
func (r *rewriter) fieldNameVerb(c *ast.CallExpr) (ast.Expr, string) {
	if r.info == nil {
		return nil, ""
	}
	name, first, ok := r.fmtCall(c)
	format, isFormat := r.fmtFormat(c, first)
	if !ok || !printfNames[name] || !isFormat {
		return nil, ""
	}
	k := first + 1
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		flags := ""
		for i++; i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0; i++ {
			if format[i] == '+' || format[i] == '#' {
				flags += string(format[i])
			}
		}
		if i >= len(format) || format[i] == '*' || format[i] == '[' {
			return nil, ""
		}
		if format[i] == '%' {
			continue
		}
		verb := format[i]
		if k < len(c.Args) && (verb == 'T' || verb == 'v' && flags != "") {
			t := r.typeOf(c.Args[k])
			if t != nil && fileMethod(t, "Error") == "" && fileMethod(t, "String") == "" && fileStruct(t) {
				return c.Args[k], strings.Trim(flags, "-") + string(verb)
			}
		}
		k++
	}
	return nil, ""
}

// fileStruct reports whether t is, or points to, a struct type the file declares.
func fileStruct(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "artifact" {
		return false
	}
	_, ok = named.Underlying().(*types.Struct)
	return ok
}

// capturesObject reports whether a function literal in body uses the variable def declares, or
// body takes its address: loopUses goes by name, and a closure's own i (sort.Slice(x, func(i, j
// int) bool {...})) is not the loop's. Without the type check's objects it answers true.
func (r *rewriter) capturesObject(body *ast.BlockStmt, def *ast.Ident) bool {
	if r.info == nil || r.info.Defs == nil || r.info.Defs[def] == nil {
		return true
	}
	obj := r.info.Defs[def]
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			ast.Inspect(n.Body, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && r.info.Uses[id] == obj {
					found = true
				}
				return !found
			})
			return false
		case *ast.UnaryExpr:
			if id, ok := n.X.(*ast.Ident); ok && n.Op == token.AND && r.info.Uses[id] == obj {
				found = true
			}
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && r.info.Uses[id] == obj && r.info.Selections != nil {
				if s, ok := r.info.Selections[n]; ok && s.Kind() == types.MethodVal && !s.Indirect() {
					_, ptr := s.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer)
					found = ptr // a pointer method value binds &id
				}
			}
		}
		return !found
	})
	return found
}

// nativeInterface reports whether e's static type is an interface the interpreter implements
// natively (error, a package's interface: unresolved here), through which a value of the file's
// types travels wrapped: a type switch does not see the file's type behind the wrapper, and ==
// compares the wrapper.
func (r *rewriter) nativeInterface(e ast.Expr) bool {
	t := r.typeOf(e)
	if t == nil {
		return true
	}
	if types.Identical(t, types.Universe.Lookup("error").Type()) {
		return true
	}
	return false
}

// fileValueType reports whether t is a non-pointer, non-interface type the file declares that
// has methods (the interpreter wraps such a value in an error or a package's interface, and no
// assertion finds it again).
func fileValueType(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && fileType(t) && named.NumMethods() > 0
}

// fileType reports whether t is, or points to, a non-interface type the file declares.
func fileType(t types.Type) bool {
	if t == nil || types.IsInterface(t) {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "artifact" && !types.IsInterface(named)
}

const sentinelHint = "declare sentinel errors with errors.New (var errNotFound = errors.New(\"not found\")), or compare after a type assertion: if e, ok := err.(*myErr); ok && e == errMine"

// nativeInterfaceGap returns the refusal for n when it is one of the ways an error (or a
// package's interface) holding a value of the file's types answers differently on the
// interpreter: a type switch with a case of the file's type (never taken: [-1] for [1]), ==
// or != against a value of the file's type (false), errors.Is with such a target (false),
// errors.As into such a variable (a run-time panic). A type assertion works and is the hint.
func (r *rewriter) nativeInterfaceGap(n ast.Node) (msg, hint string, at ast.Node) {
	switch n := n.(type) {
	case *ast.TypeSwitchStmt:
		var x ast.Expr
		switch a := n.Assign.(type) {
		case *ast.AssignStmt:
			x = a.Rhs[0].(*ast.TypeAssertExpr).X
		case *ast.ExprStmt:
			x = a.X.(*ast.TypeAssertExpr).X
		}
		if x == nil || !r.nativeInterface(x) {
			return "", "", nil
		}
		for _, cc := range n.Body.List {
			for _, e := range cc.(*ast.CaseClause).List {
				if tv, ok := r.info.Types[e]; ok && tv.IsType() && fileValueType(tv.Type) {
					return fmt.Sprintf("type switch on %s (an error or a package's interface) with case %s, a non-pointer type of the file with methods: the interpreter never takes that case", types.ExprString(x), types.ExprString(e)),
						fmt.Sprintf("give %s's methods a pointer receiver and switch on *%s (return &%s{...})", types.ExprString(e), types.ExprString(e), types.ExprString(e)), e
				}
			}
		}
	case *ast.TypeAssertExpr:
		if n.Type == nil || !r.nativeInterface(n.X) {
			return "", "", nil
		}
		if tv, ok := r.info.Types[n.Type]; ok && tv.IsType() && fileValueType(tv.Type) {
			return fmt.Sprintf("type assertion %s on an error or a package's interface to a non-pointer type of the file with methods: the interpreter's assertion fails", types.ExprString(n)),
				fmt.Sprintf("give %s's methods a pointer receiver and assert *%s (return &%s{...})", types.ExprString(n.Type), types.ExprString(n.Type), types.ExprString(n.Type)), n
		}
	case *ast.BinaryExpr:
		if n.Op != token.EQL && n.Op != token.NEQ {
			return "", "", nil
		}
		for _, p := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
			if r.typeOf(p[0]) != nil && r.nativeInterface(p[0]) && fileType(r.typeOf(p[1])) {
				return fmt.Sprintf("%s compares an error with %s, a value of the file's type: the interpreter compares its wrapper and answers false", types.ExprString(n), types.ExprString(p[1])),
					sentinelHint, n
			}
		}
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		if !ok || len(n.Args) != 2 {
			return "", "", nil
		}
		if x, ok := sel.X.(*ast.Ident); !ok || r.imports[x.Name] != "errors" || r.declared[x.Name] {
			return "", "", nil
		}
		target := r.typeOf(n.Args[1])
		switch sel.Sel.Name {
		case "Is":
			if fileType(target) {
				return fmt.Sprintf("errors.Is with %s, a value of the file's type: the interpreter compares its wrapper and answers false", types.ExprString(n.Args[1])), sentinelHint, n
			}
		case "As":
			if p, ok := target.(*types.Pointer); ok && target != nil && fileType(p.Elem()) {
				return fmt.Sprintf("errors.As into %s, a variable of the file's type: the interpreter panics (*target must be interface or implement error)", types.ExprString(n.Args[1])),
					"use a type assertion on the error (if e, ok := err.(*myErr); ok), unwrapping with errors.Unwrap in a loop if it is wrapped", n
			}
		}
	}
	return "", "", nil
}

func isNil(e ast.Expr) bool {
	id, ok := ast.Unparen(e).(*ast.Ident)
	return ok && id.Name == "nil"
}

// typeSwitches turns a type switch with a case of the file's types into an expression switch on
// type assertions. The interpreter does not take such cases reliably: without a bound variable a
// case of a value type with methods is skipped (any holding valStr{3}: case valStr never runs), with
// one a case of a pointer type with methods is (switch v := a.(type) { case *T: }), and on an
// error no case of the file's types is taken; the comma-ok assertion gives Go's answer in each:
//
//	switch v := x.(type) {      ->   { forge__v1 := x; switch {
//	case *T:                         case func() bool { _, ok := forge__v1.(*T); return ok }(): v := forge__v1.(*T); _ = v;
//	case nil:                        case forge__v1 == nil: v := forge__v1; _ = v;
//	default:                         default: v := forge__v1; _ = v;
//	}                                }}
//
// The cases keep their order (a tagless switch tries them in order, default last, as a type switch
// does) and break still leaves the switch. A clause with several types, nil or default binds x's
// value with x's type, as Go does. A case of a file's value type on an error is refused
// (gapRefusal): the assertion is not taken there either.
func (r *rewriter) typeSwitches() {
	if r.info == nil {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSwitchStmt)
		if !ok || ts.Init != nil {
			return true
		}
		var id *ast.Ident
		var ta *ast.TypeAssertExpr
		switch a := ts.Assign.(type) {
		case *ast.AssignStmt:
			id, _ = a.Lhs[0].(*ast.Ident)
			ta, _ = a.Rhs[0].(*ast.TypeAssertExpr)
		case *ast.ExprStmt:
			ta, _ = a.X.(*ast.TypeAssertExpr)
		}
		if ta == nil || strings.Contains(r.text(ta.X), "\n") {
			return true
		}
		fileCase := false
		for _, st := range ts.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				if tv, ok := r.info.Types[e]; ok && tv.IsType() && fileType(tv.Type) {
					fileCase = true
				}
			}
		}
		if !fileCase {
			return true
		}
		tmp := r.tmp()
		r.add(r.off(ts.Switch), r.off(ts.Body.Lbrace), fmt.Sprintf("{ %s := %s; switch ", tmp, r.text(ta.X))+newlines(r.src[r.off(ts.Switch):r.off(ts.Body.Lbrace)]))
		r.add(r.off(ts.End()), r.off(ts.End()), "}")
		for _, st := range ts.Body.List {
			cc := st.(*ast.CaseClause)
			if len(cc.List) > 0 {
				var conds []string
				for _, e := range cc.List {
					if isNil(e) {
						conds = append(conds, tmp+" == nil")
					} else {
						conds = append(conds, fmt.Sprintf("func() bool { _, ok := %s.(%s); return ok }()", tmp, r.text(e)))
					}
				}
				r.add(r.off(cc.List[0].Pos()), r.off(cc.List[len(cc.List)-1].End()), strings.Join(conds, " || ")+newlines(r.src[r.off(cc.List[0].Pos()):r.off(cc.List[len(cc.List)-1].End())]))
			}
			if id == nil || id.Name == "_" {
				continue
			}
			bind := tmp
			if len(cc.List) == 1 && !isNil(cc.List[0]) {
				bind = tmp + ".(" + r.text(cc.List[0]) + ")"
			}
			at := r.off(cc.Colon) + 1
			r.add(at, at, fmt.Sprintf(" %s := %s; _ = %s;", id.Name, bind, id.Name))
		}
		return true
	})
}

// printfNames are fmt's functions that take a format.
var printfNames = map[string]bool{"Printf": true, "Sprintf": true, "Fprintf": true, "Errorf": true, "Appendf": true}

// fmtCall recognises a call of one of package fmt's print functions (fmt imported under its
// name, not shadowed) and returns the function's name and the index of its first argument after
// the writer or buffer of Fprint* and Append* (for the *f functions, the format's).
func (r *rewriter) fmtCall(c *ast.CallExpr) (name string, first int, ok bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", 0, false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok || r.imports[x.Name] != "fmt" || r.declared[x.Name] {
		return "", 0, false
	}
	name = sel.Sel.Name
	if strings.HasPrefix(name, "F") || strings.HasPrefix(name, "Append") {
		first = 1 // the writer or buffer
	}
	return name, first, true
}

// fmtFormat returns the constant format at c.Args[at], false when it is not a string literal.
func (r *rewriter) fmtFormat(c *ast.CallExpr, at int) (string, bool) {
	if len(c.Args) <= at {
		return "", false
	}
	lit, ok := c.Args[at].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	format, err := strconv.Unquote(lit.Value)
	return format, err == nil
}

// fmtArgVerbs returns, for a call of fmt's Print* or *f functions, its name, the index of its
// first printed argument and the verb each printed argument gets ('v' for the Print functions);
// false for any other call, or a format that is not a literal formatVerbs can read.
func (r *rewriter) fmtArgVerbs(c *ast.CallExpr) (name string, first int, verbs []byte, ok bool) {
	name, first, ok = r.fmtCall(c)
	if !ok {
		return "", 0, nil, false
	}
	switch {
	case printfNames[name]:
		format, isFormat := r.fmtFormat(c, first)
		if !isFormat {
			return "", 0, nil, false
		}
		if verbs, ok = formatVerbs(format); !ok {
			return "", 0, nil, false
		}
		return name, first + 1, verbs, true
	case name == "Print" || name == "Println" || name == "Sprint" || name == "Sprintln" ||
		name == "Fprint" || name == "Fprintln" || name == "Append" || name == "Appendln":
		for range c.Args[min(first, len(c.Args)):] {
			verbs = append(verbs, 'v')
		}
		return name, first, verbs, true
	}
	return "", 0, nil, false
}

// nestedMethodArg returns the first print argument (formatted through methods: %v %s %q %x %X
// or a Print function) whose elements, keys, values or exported fields are of a type of the
// file with an Error or String method, and that type's name: fmt calls those methods on Go,
// and on the interpreter it does not (fmt.Sprint([]tag{1}) gives "[1]"). A value of such a
// type itself is rewritten (fmtMethods).
func (r *rewriter) nestedMethodArg(c *ast.CallExpr) (ast.Expr, string) {
	if r.info == nil {
		return nil, ""
	}
	_, first, verbs, ok := r.fmtArgVerbs(c)
	if !ok {
		return nil, ""
	}
	for i, v := range verbs {
		if first+i >= len(c.Args) || !strings.ContainsRune("vsqxX", rune(v)) {
			continue
		}
		arg := c.Args[first+i]
		if t := r.typeOf(arg); t != nil {
			if inner := nestedMethodType(t, map[types.Type]bool{}, true); inner != "" {
				return arg, inner
			}
		}
	}
	return nil, ""
}

// nestedMethodType returns the name of a type of the file with an Error or String method found
// inside t (not t itself when top): elements, keys, values, exported fields, pointers.
func nestedMethodType(t types.Type, seen map[types.Type]bool, top bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if !top && (fileMethod(t, "Error") != "" || fileMethod(t, "String") != "") {
		return types.TypeString(t, func(*types.Package) string { return "" })
	}
	if top && (fileMethod(t, "Error") != "" || fileMethod(t, "String") != "") {
		return "" // formatted through its own method (fmtMethods)
	}
	switch u := t.Underlying().(type) {
	case *types.Slice:
		return nestedMethodType(u.Elem(), seen, false)
	case *types.Array:
		return nestedMethodType(u.Elem(), seen, false)
	case *types.Map:
		if k := nestedMethodType(u.Key(), seen, false); k != "" {
			return k
		}
		return nestedMethodType(u.Elem(), seen, false)
	case *types.Pointer:
		if top {
			return nestedMethodType(u.Elem(), seen, true)
		}
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if u.Field(i).Exported() {
				if n := nestedMethodType(u.Field(i).Type(), seen, false); n != "" {
					return n
				}
			}
		}
	}
	return ""
}
