package gate

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func check(t *testing.T, code string, opts Options) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "a.go", code, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err, code)
	if err := Check(fset, f, opts); err != nil {
		return sandbox.AsError(err).Message
	}
	return "ok"
}

// TestCheckSiblings: the siblings of the dot-import gap that are not whole corpus programs.
func TestCheckSiblings(t *testing.T) {
	art, test := Options{}, Options{Test: true}
	cases := []struct {
		name string
		opts Options
		code string
		want string
	}{
		{"method expression on an allowed type", art, `package a; import "time"; var f = (time.Time).Add`, "ok"},
		{"method value on time.Now's result is still time.Now", art, `package a; import "time"; var f = time.Now().Add`, "time.Now is not available in the sandbox"},
		{"blank import of an allowed package", art, `package a; import _ "time"`, "ok"},
		{"blank import of a refused package", art, `package a; import _ "os"`, `import "os" is not allowed`},
		{"dot import of forge/host", art, `package a; import . "forge/host"`, `dot import of "forge/host" is not allowed`},
		{"alias naming another package", art, `package a; import fmt "strings"; var s = fmt.ToUpper("a")`, `import alias fmt for "strings" is the name of package "fmt"`},
		{"alias of forge/host", art, `package a; import h "forge/host"; var f = h.Log`, "ok"},
		{"ordinary alias", art, `package a; import str "strings"; var s = str.ToUpper("a")`, "ok"},
		{"same name alias", art, `package a; import strings "strings"; var s = strings.ToUpper("a")`, "ok"},
		{"line directive", art, "package a\n//line x.go:1\nvar x = 1", `directive "//line" is not allowed`},
		{"plus build without space", art, "//+build linux\n\npackage a", `build constraint "+build" is not allowed`},
		{"a comment mentioning +build is fine", art, "package a\n// builds with +build tags are refused\nvar x = 1", "ok"},
		{"package-level var nil", art, `package a; var nil = 1`, "package-level declaration of predeclared nil is not allowed"},
		{"package-level type error", art, `package a; type error int`, "package-level declaration of predeclared error is not allowed"},
		{"package-level type _", art, `package a; type _ struct{}`, "package-level type _ is not allowed"},
		{"other blank declarations are fine", art, `package a; import _ "strings"; var _ = 1; const _ = 2; func _() {}; type t struct{ _ int }; func (t) _() {}; func g[_ any](_ int) { type _ int }`, "ok"},
		{"package-level min and max helpers are fine", art, `package a; func min(a, b int) int { if a < b { return a }; return b }; func max(a, b int) int { if a > b { return a }; return b }`, "ok"},
		{"method named len is fine", art, `package a; type T struct{}; func (T) len() int { return 0 }`, "ok"},
		{"local shadowing of predeclared names", art, `package a; func F() int { len, any := 1, 2; return len + any }`, "ok"},
		{"FORGE__ in any case", art, `package a; var FORGE__x = 1`, "identifier FORGE__x is reserved for the sandbox"},
		{"fmt.Println prints to the captured stdout", art, `package a; import "fmt"; func F() { fmt.Println(1) }`, "ok"},
		{"fmt.Scanln", art, `package a; import "fmt"; func F() { var s string; fmt.Scanln(&s) }`, "fmt.Scanln is not available in the sandbox"},
		{"withheld name of an allowed package", art, `package a; import "io"; var r io.PipeWriter`, "io.PipeWriter is not available in the sandbox"},
		{"name that does not exist", art, `package a; import "strings"; var s = strings.NoSuchFunc`, "strings.NoSuchFunc is not available in the sandbox"},
		{"generic packages are whole", art, `package a; import "slices"; var f = slices.Sorted[[]int]`, "ok"},
		{"unimported time.Now", art, `package a; func F() int { return time.Now().Year() }`, "time.Now is not available in the sandbox"},
		{"a local named time is not the package", art, `package a; type c struct{ Now int }; func F(time c) int { return time.Now }`, "ok"},
		{"math/rand in an artifact", art, `package a; import "math/rand"; var n = rand.Intn(3)`, `import "math/rand" is not allowed`},
		{"math/rand in a test", test, `package a; import "math/rand"; var n = rand.Intn(3)`, "ok"},
		{"math/rand.Read in a test", test, `package a; import "math/rand"; var n, _ = rand.Read(nil)`, "rand.Read is not available in the sandbox"},
		{"time.Now in a test", test, `package a; import "time"; var n = time.Now()`, "ok"},
		{"time.Since in a test", test, `package a; import "time"; var n = time.Since(time.Now())`, "ok"},
		{"time.Until in a test", test, `package a; import "time"; var n = time.Until(time.Now())`, "time.Until is not available in the sandbox"},
		{"time.Sleep in a test", test, `package a; import "time"; func F() { time.Sleep(1) }`, "time.Sleep is not available in the sandbox"},
		{"time.Now in a test through the companion import", Options{Test: true, Companion: map[string]string{"time": "time"}}, `package a; var n = time.Now()`, "ok"},
		{"testing.T in a test", test, `package a; import "testing"; func TestX(t *testing.T) { t.Log(testing.Short()) }`, "ok"},
		{"testing.Main in a test", test, `package a; import "testing"; var f = testing.Main`, "testing.Main is not available in acceptance tests"},
		{"TestMain in a test would take over the test binary", test, `package a; import "testing"; func TestMain(m *testing.M) {}`, "testing.M is not available in acceptance tests"},
		{"testify method FileExistsf in a test", test, `package a; import ("testing"; "github.com/stretchr/testify/assert"); func TestX(t *testing.T) { assert.New(t).FileExistsf("/etc/passwd", "") }`, "FileExistsf is not available in acceptance tests"},
		{"testify method HTTPSuccess in a test", test, `package a; import ("testing"; "github.com/stretchr/testify/require"); func TestX(t *testing.T) { require.New(t).HTTPSuccess(nil, "GET", "/", nil) }`, "HTTPSuccess is not available in acceptance tests"},
		{"testify function FileExists in a test", test, `package a; import ("testing"; "github.com/stretchr/testify/assert"); func TestX(t *testing.T) { assert.FileExists(t, "/etc/passwd") }`, "assert.FileExists is not available in the sandbox"},
		{"t.TempDir in a test", test, `package a; import "testing"; func TestX(t *testing.T) { t.TempDir() }`, "TempDir is not available in acceptance tests"},
		{"unsafe in a test", test, `package a; import "unsafe"`, `import "unsafe" is not allowed`},
		{"reflect in a test", test, `package a; import "reflect"`, `import "reflect" is not allowed`},
		{"syscall in a test", test, `package a; import "syscall"`, `import "syscall" is not allowed`},
		{"net in a test", test, `package a; import "net"`, `import "net" is not allowed`},
		{"go statement in a test", test, `package a; func F() { go F() }`, "go statement is not allowed"},
	}
	for _, c := range cases {
		got := check(t, c.code, c.opts)
		if c.want == "ok" {
			assert.Equal(t, "ok", got, c.name)
		} else {
			assert.Contains(t, got, c.want, c.name)
		}
	}
}

// TestAllowlistAgreesWithDenials: no withheld symbol is in the generated allowlist (the generator's
// exclusions and deniedSymbols name the same things), every StdImport target is allowed, and the
// host API is sorted (isHostName searches it).
func TestAllowlistAgreesWithDenials(t *testing.T) {
	for key := range deniedSymbols {
		pkg, name, _ := strings.Cut(key, ".")
		for path, p := range allowlist {
			if defaultName(path) == pkg {
				assert.NotContains(t, p.names, name, "%s is denied but in the %s table", key, path)
			}
		}
	}
	for name, path := range stdImports {
		assert.True(t, Allowed(path, false), "StdImport %s -> %s is not allowed", name, path)
	}
	assert.IsIncreasing(t, hostAPI)
	for path, p := range allowlist {
		assert.IsIncreasing(t, p.names, path)
		assert.NotEmpty(t, p.names, path)
	}
	assert.True(t, Allowed("math/rand", true))
	assert.False(t, Allowed("math/rand", false))
	assert.True(t, Allowed("testing", true))
	assert.False(t, Allowed("testing", false))
}
