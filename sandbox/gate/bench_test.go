package gate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// BenchmarkCheck gates every HumanEval-X artifact (prompt + canonical solution) once per
// iteration; parsing is outside the timer.
func BenchmarkCheck(b *testing.B) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range sandboxtest.LoadHumanEval(b) {
		f, err := parser.ParseFile(fset, "a.go", "package artifact\n"+p.Prompt+p.CanonicalSolution, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if err := Check(fset, f, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
