package guestgen

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

// GateCode parses code, normalizes it to package artifact, runs the shared gate on it (as the
// yaegi backend does: on the file as written), then adds forgotten imports (companion: the imports
// of the file it is compiled with) and blanks unused ones, which go build needs and the gate
// already judged (it resolves a forgotten import as if written; a blank import of an allowed
// package is allowed). Gating after the edits let an unused refused alias through as a blank one.
func GateCode(code string, test bool, companion map[string]string) (string, *ast.File, error) {
	norm, f, fset, err := NormalizePackage(code)
	if err != nil {
		return "", nil, err
	}
	if err := gate.Check(fset, f, gate.Options{Test: test, Companion: companion}); err != nil {
		return "", nil, err
	}
	fixed := AddMissingImports(norm, f, fset, companion)
	if fixed != norm {
		if norm, f, fset, err = NormalizePackage(fixed); err != nil {
			return "", nil, err
		}
	}
	if fixed := BlankUnusedImports(norm, f, fset); fixed != norm {
		if norm, f, _, err = NormalizePackage(fixed); err != nil {
			return "", nil, err
		}
	}
	return norm, f, nil
}

// GateCall gates the code of a call program (GateCode) and parses its function's signature.
func GateCall(src sandbox.Source) (string, sandbox.Signature, error) {
	code, _, err := GateCode(src.Code, false, nil)
	if err != nil {
		return "", sandbox.Signature{}, err
	}
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: code, Func: src.Func})
	if err != nil {
		return "", sandbox.Signature{}, err
	}
	return code, sig, nil
}

// AddMissingImports adds, on the package line (so no line moves), the imports of packages code
// uses but forgot to import: first those of the companion file (a test file sees what the artifact
// imported, as it would in a single-file HumanEval harness), then the shared table of allowlisted
// packages. go build would otherwise reject code the yaegi backend accepts. The result still goes
// through the policy gate.
func AddMissingImports(code string, f *ast.File, fset *token.FileSet, companion map[string]string) string {
	imported := FileImports(f)
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

// FileImports maps each import's local name onto its path.
func FileImports(f *ast.File) map[string]string {
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

// BlankUnusedImports turns imports the file never uses into blank imports (same line, same
// package, init effects kept): go build rejects an unused import, the yaegi backend does not, and
// a HumanEval-style prompt often imports for the test that shared its file.
func BlankUnusedImports(code string, f *ast.File, fset *token.FileSet) string {
	used := qualifiers(f)
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for _, is := range f.Imports {
		name := importName(is)
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

// qualifiers are the names n uses as the X of a selector X.Sel (the imports it refers to, and
// whatever else it selects from).
func qualifiers(n ast.Node) map[string]bool {
	used := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				used[x.Name] = true
			}
		}
		return true
	})
	return used
}

// importName is the name an import is used by in its file: its own, else its path's last element.
func importName(is *ast.ImportSpec) string {
	if is.Name != nil {
		return is.Name.Name
	}
	p, _ := strconv.Unquote(is.Path.Value)
	return p[strings.LastIndex(p, "/")+1:]
}
