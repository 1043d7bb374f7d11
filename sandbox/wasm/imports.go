package wasm

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// Gate runs exactly what Compile runs before building: parse, normalize (package artifact,
// forgotten imports added, unused ones blanked) and the shared gate (sandbox/gate.Check). It
// exists so that tests can hold both backends to the same verdicts.
func Gate(src sandbox.Source) error {
	_, _, err := gateCode(src.Code, false, nil)
	return err
}

// GateTests runs what Test runs before building: Gate on the artifact, the shared gate on the
// test file (test rules, the artifact's imports visible) and the boundary check.
func GateTests(src sandbox.Source, testCode string) error {
	_, _, _, err := gateSuite(src.Code, testCode)
	return err
}

// addMissingImports adds, on the package line (so no line moves), the imports of packages code
// uses but forgot to import: first those of the companion file (a test file sees what the artifact
// imported, as it would in a single-file HumanEval harness), then the shared table of allowlisted
// packages. go build would otherwise reject code the yaegi backend accepts. The result still goes
// through the policy gate.
func addMissingImports(code string, f *ast.File, fset *token.FileSet, companion map[string]string) string {
	imported := fileImports(f)
	declared := gate.DeclaredNames(f)
	missing := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || declared[x.Name] || imported[x.Name] != "" || missing[x.Name] != "" {
			return true
		}
		if p := companion[x.Name]; p != "" {
			missing[x.Name] = p
		} else if p, ok := gate.StdImport(x.Name); ok {
			missing[x.Name] = p
		}
		return true
	})
	if len(missing) == 0 {
		return code
	}
	names := make([]string, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		p := missing[n]
		if p[strings.LastIndex(p, "/")+1:] == n {
			fmt.Fprintf(&b, "; import %q", p)
		} else {
			fmt.Fprintf(&b, "; import %s %q", n, p)
		}
	}
	end := fset.Position(f.Name.End()).Offset
	return code[:end] + b.String() + code[end:]
}

// fileImports maps each import's local name onto its path.
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		m[name] = p
	}
	return m
}

// blankUnusedImports turns imports the file never uses into blank imports (same line, same
// package, init effects kept): go build rejects an unused import, the yaegi backend does not, and
// a HumanEval-style prompt often imports for the test that shared its file.
func blankUnusedImports(code string, f *ast.File, fset *token.FileSet) string {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				used[x.Name] = true
			}
		}
		return true
	})
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		if name == "_" || name == "." || used[name] {
			continue
		}
		if is.Name != nil {
			edits = append(edits, edit{fset.Position(is.Name.Pos()).Offset, fset.Position(is.Name.End()).Offset, "_"})
		} else {
			off := fset.Position(is.Path.Pos()).Offset
			text := "_ "
			if off > 0 && code[off-1] != ' ' && code[off-1] != '\t' && code[off-1] != '\n' {
				text = " _ " // import"x" is valid Go, import_ "x" is not
			}
			edits = append(edits, edit{off, off, text})
		}
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		code = code[:e.start] + e.text + code[e.end:]
	}
	return code
}
