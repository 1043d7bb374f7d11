package sandbox_test

import (
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestCheckReturns holds CheckReturns to go/types: for every body, the gate must report a missing
// return exactly when the Go type checker does, on the same line.
func TestCheckReturns(t *testing.T) {
	bodies := map[string]struct {
		body    string
		missing bool
	}{
		"plain return":         {"return 1", false},
		"empty body":           {"", true},
		"if without else":      {"if x > 0 { return 1 }", true},
		"if else":              {"if x > 0 { return 1 } else { return 2 }", false},
		"if else if":           {"if x > 0 { return 1 } else if x < 0 { return 2 }", true},
		"if else if else":      {"if x > 0 { return 1 } else if x < 0 { return 2 } else { return 0 }", false},
		"panic":                {`panic("no")`, false},
		"parenthesized panic":  {`(panic)("no")`, false},
		"trailing empty":       {"return 1;;", false},
		"endless for":          {"for { x++ }", false},
		"for with cond":        {"for x < 10 { return 1 }", true},
		"for with break":       {"for { if x > 3 { break }; x++ }", true},
		"break of inner loop":  {"for { for { break }; x++ }", false},
		"labeled break outer":  {"L: for { for { break L } }", true},
		"labeled continue":     {"L: for { for { continue L } }", false},
		"break in inner sw":    {"for { switch x { case 1: break } }", false},
		"labeled break in sw":  {"L: for { switch x { case 1: break L } }", true},
		"range loop":           {"for range []int{1} { return 1 }", true},
		"switch default":       {"switch x { case 1: return 1; default: return 2 }", false},
		"switch no default":    {"switch x { case 1: return 1; case 2: return 2 }", true},
		"switch fallthrough":   {"switch x { case 1: fallthrough; default: return 2 }", false},
		"switch case break":    {"switch x { case 1: break; default: return 2 }", true},
		"switch labeled break": {"S: switch x { case 1: if x > 0 { break S }; return 1; default: return 2 }", true},
		"type switch":          {"var v any = x; switch v.(type) { case int: return 1; default: return 2 }", false},
		"type switch no def":   {"var v any = x; switch v.(type) { case int: return 1 }", true},
		"empty select":         {"select {}", false},
		"select all return":    {"c := make(chan int); select { case <-c: return 1; default: return 2 }", false},
		"select with break":    {"c := make(chan int); select { case <-c: break; default: return 2 }", true},
		"goto":                 {"L: x++; goto L", false},
		"block":                {"{ return 1 }", false},
		"labeled block return": {"L: { return 1 }", false},
		"closure missing":      {"f := func() int { if x > 0 { return 1 } }; return f()", true},
		"closure ok":           {"f := func() int { return x }; return f()", false},
		"return after loop":    {"for x > 0 { x-- }; return x", false},
	}
	for name, tc := range bodies {
		t.Run(name, func(t *testing.T) {
			code := "package artifact\n\nfunc F(x int) int {\n" + strings.ReplaceAll(tc.body, "; ", "\n") + "\n}\n"
			fset := token.NewFileSet()
			f, _, err := sandbox.ParseFile(fset, code)
			require.NoError(t, err, code)

			goLine := 0
			conf := types.Config{Importer: importer.Default(), Error: func(err error) {
				if te, ok := err.(types.Error); ok && strings.Contains(te.Msg, "missing return") && goLine == 0 {
					goLine = te.Fset.Position(te.Pos).Line
				}
			}}
			_, _ = conf.Check("artifact", fset, []*ast.File{f}, nil)
			require.Equal(t, tc.missing, goLine != 0, "go/types disagrees with the table: %s", code)

			err = sandbox.CheckReturns(fset, f)
			if !tc.missing {
				assert.NoError(t, err)
				return
			}
			var se *sandbox.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, sandbox.KindCompile, se.Kind)
			assert.Equal(t, goLine, se.Line)
			assert.Contains(t, se.Message, "missing return")
			assert.NotEmpty(t, se.Hint)
		})
	}
}

func TestCheckReturnsNoResults(t *testing.T) {
	fset := token.NewFileSet()
	f, _, err := sandbox.ParseFile(fset, "package artifact\nfunc F(x int) { if x > 0 { return } }\nfunc G() (err error) { return }\n")
	require.NoError(t, err)
	assert.NoError(t, sandbox.CheckReturns(fset, f))
}
