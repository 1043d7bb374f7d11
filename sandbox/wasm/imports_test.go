package wasm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlankUnusedImports(t *testing.T) {
	code := "package artifact\n\nimport (\n\t\"strings\"\n\tm \"math\"\n\t\"sort\"\n\t_ \"embed\"\n)\n\nfunc F(x []int) { sort.Ints(x) }\n"
	want := "package artifact\n\nimport (\n\t_ \"strings\"\n\t_ \"math\"\n\t\"sort\"\n\t_ \"embed\"\n)\n\nfunc F(x []int) { sort.Ints(x) }\n"
	norm, f, fset, err := normalizePackage(code)
	require.NoError(t, err)
	assert.Equal(t, want, blankUnusedImports(norm, f, fset))

	// import"x" (no space) is valid Go; the blank must not glue onto the keyword.
	norm, f, fset, err = normalizePackage("package artifact;import\"strings\"\nfunc F() {}\n")
	require.NoError(t, err)
	assert.Equal(t, "package artifact;import _ \"strings\"\nfunc F() {}\n", blankUnusedImports(norm, f, fset))
}

func TestAddMissingImports(t *testing.T) {
	for _, c := range []struct {
		name, code string
		companion  map[string]string
		want       string
	}{
		{"forgotten std import", "package artifact\n\nfunc F(s string) string { return strings.ToUpper(s) }\n", nil,
			"package artifact; import \"strings\"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n"},
		{"renamed path", "package artifact\n\nfunc F(b []byte) bool { return json.Valid(b) }\n", nil,
			"package artifact; import \"encoding/json\"\n\nfunc F(b []byte) bool { return json.Valid(b) }\n"},
		{"from the companion file", "package artifact\n\nfunc G() float64 { return m.Pi }\n", map[string]string{"m": "math"},
			"package artifact; import m \"math\"\n\nfunc G() float64 { return m.Pi }\n"},
		{"already imported", "package artifact\n\nimport \"strings\"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n", nil,
			"package artifact\n\nimport \"strings\"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n"},
		{"shadowed by a local", "package artifact\n\ntype T struct{ X int }\n\nfunc F() int { strings := T{1}; return strings.X }\n", nil,
			"package artifact\n\ntype T struct{ X int }\n\nfunc F() int { strings := T{1}; return strings.X }\n"},
		{"unknown name left alone", "package artifact\n\nfunc F() int { return foo.Bar }\n", nil,
			"package artifact\n\nfunc F() int { return foo.Bar }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, f, fset, err := normalizePackage(c.code)
			require.NoError(t, err)
			assert.Equal(t, c.want, addMissingImports(code, f, fset, c.companion))
		})
	}
}
