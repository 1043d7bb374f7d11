package gate

import (
	"go/ast"
	"go/token"
	"strconv"

	"github.com/artifactforge/forge/sandbox"
)

// CheckTestBoundary keeps an artifact from reaching test-only code. An artifact and its tests are
// compiled as one package (tests call unexported functions), so a name the test file declares at
// top level (a helper that reads the clock, a reference implementation) would be visible to the
// artifact. This refuses, as KindPolicy errors:
//
//   - an artifact reference to a name declared at the test file's top level, or imported only by
//     the test file, that the artifact does
//     not declare itself (at top level, or anywhere in the declaration that uses it: a local of
//     the same name, a struct field);
//   - a method the test file declares on a type the artifact declares (it would join the
//     artifact's method sets, reachable through interfaces).
//
// The artifact is compiled alone for every real call, so what it cannot see there it must not
// see under test either. Both backends call this on the two parsed files after Check.
func CheckTestBoundary(fset *token.FileSet, artifact, tests *ast.File) error {
	testNames := topLevelNames(tests)
	artNames := topLevelNames(artifact)
	for _, d := range tests.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
			continue
		}
		if recv := ReceiverType(fd.Recv.List[0].Type); artNames[recv] {
			return &sandbox.Error{Kind: sandbox.KindPolicy, Line: fset.Position(fd.Pos()).Line,
				Message: "method " + recv + "." + fd.Name.Name + " is declared in the test file on a type of the artifact",
				Hint:    "tests cannot add methods to the artifact's types: write a plain helper function in the test file"}
		}
	}
	// A package the test file imports and the artifact does not is test-only too (math/rand, the
	// clock's time when only the test imports it): the artifact must not lean on its import.
	artImports := map[string]bool{}
	for _, is := range artifact.Imports {
		artImports[ImportName(is)] = true
	}
	for _, is := range tests.Imports {
		if n := ImportName(is); n != "_" && n != "." && !artImports[n] {
			testNames[n] = true
		}
	}
	for _, d := range artifact.Decls {
		if err := refsToTests(fset, d, testNames, artNames, declaredIn(d)); err != nil {
			return err
		}
	}
	return nil
}

// ImportName is the name an import binds in its file.
func ImportName(is *ast.ImportSpec) string {
	if is.Name != nil {
		return is.Name.Name
	}
	p, _ := strconv.Unquote(is.Path.Value)
	return defaultName(p)
}

// InTests marks a gate error as the test file's (or the test run's): a copy of the *sandbox.Error
// with "tests: " before its message, so both backends report test-file refusals alike.
func InTests(err error) error {
	if err == nil {
		return nil
	}
	e := *sandbox.AsError(err)
	e.Message = "tests: " + e.Message
	return &e
}

// refsToTests finds, under n, the first identifier that can only mean a test-file name: not a
// selector's field or method name, not a composite literal's field key.
func refsToTests(fset *token.FileSet, n ast.Node, testNames, artNames, local map[string]bool) error {
	var err error
	ast.Inspect(n, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			err = refsToTests(fset, n.X, testNames, artNames, local)
			return false
		case *ast.KeyValueExpr:
			if _, ok := n.Key.(*ast.Ident); ok { // most likely a struct field name
				err = refsToTests(fset, n.Value, testNames, artNames, local)
				return false
			}
		case *ast.Ident:
			err = testOnly(fset, n, testNames, artNames, local)
		}
		return err == nil
	})
	return err
}

func testOnly(fset *token.FileSet, id *ast.Ident, testNames, artNames, local map[string]bool) error {
	if !testNames[id.Name] || artNames[id.Name] || local[id.Name] {
		return nil
	}
	return &sandbox.Error{Kind: sandbox.KindPolicy, Line: fset.Position(id.Pos()).Line,
		Message: "the artifact uses " + id.Name + ", which only the test file declares or imports",
		Hint:    "the artifact is compiled without its tests: declare what it needs in the artifact file or take it as an argument"}
}

// topLevelNames lists the package-level names a file declares (functions, types, variables,
// constants; not methods).
func topLevelNames(f *ast.File) map[string]bool {
	m := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" && d.Name.Name != "_" {
				m[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					m[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.Name != "_" {
							m[id.Name] = true
						}
					}
				}
			}
		}
	}
	return m
}

// ReceiverType is the base type name of a method receiver (T, *T, T[K], *T[K]).
func ReceiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
