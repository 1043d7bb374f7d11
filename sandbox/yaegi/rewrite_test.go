package yaegi

import (
	"strings"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

// TestRewriteRules is the rewrite layer's table: source in, and either text the rewritten source
// must contain or the refusal (a compile error with a hint) it must give, named by its message.
func TestRewriteRules(t *testing.T) {
	const pre = "package artifact\n\n"
	for _, tc := range []struct {
		name, src string
		out       string // the rewritten source contains this
		refuse    string // or: the refusal's message contains this
	}{
		{name: "min ints", src: "func F(a, b int) int { return min(a, b) }",
			out: "func(x int, ys ...int) int { for _, y := range ys { if y < x { x = y } }; return x }(a, b)"},
		{name: "max strings", src: "func F(a, b, c string) string { return max(a, b, c) }",
			out: "if y > x { x = y }"},
		{name: "min floats keeps NaN and -0", src: "func F(a, b float64) float64 { return min(a, b) }",
			out: "if x != x { break }; if y != y || y < x || y == x && 1/y < 0 { x = y }"},
		{name: "max floats keeps NaN and +0", src: "func F(a, b float32) float32 { return max(a, b) }",
			out: "if y != y || y > x || y == x && 1/y > 0 { x = y }"},
		{name: "min typed by its typed operand", src: "import \"math\"\n\nfunc F(a, b float64) float64 { return min(a, math.Sqrt(b)) }",
			out: "func(x float64, ys ...float64) float64"},
		{name: "min of constant strings stays constant", src: "func F() string { return min(\"pear\", \"apple\", \"plum\") }",
			out: "return string(\"apple\")"},
		{name: "constant min typed by its context", src: "func F() any { x := min(1, 2.5)\n\treturn x }",
			out: "x := float64(1)"},
		{name: "typed constant min", src: "const c int8 = 3\n\nfunc F() int8 { return min(c, 2) }",
			out: "return int8(2)"},
		{name: "min of untyped constants of two kinds", src: "const c = min(1, 2.5)\n\nfunc F() float64 { return c }",
			refuse: "untyped constants of different kinds"},
		{name: "min of operands of unknown type", src: "import \"math\"\n\nfunc F(b float64) float64 { return min(1, math.Sqrt(b)) }",
			refuse: "min(...) of math.Sqrt(b), whose type is not known"},
		{name: "min of a type parameter that may be a float", src: "import \"cmp\"\n\nfunc m[T cmp.Ordered](a, b T) T { return min(a, b) }\n\nfunc F() int { return m(1, 2) }",
			refuse: "type parameter T"},
		{name: "min of an integer type parameter", src: "func m[T ~int | ~string](a, b T) T { return min(a, b) }\n\nfunc F() int { return m(1, 2) }",
			out: "func(x T, ys ...T) T"},
		{name: "slices.Sort of floats orders NaN first", src: "import \"slices\"\n\nfunc F(s []float64) []float64 { slices.Sort(s); return s }",
			out: "return s[i] < s[j] || s[i] != s[i] && s[j] == s[j]"},
		{name: "slices.Sort of ints", src: "import \"slices\"\n\nfunc F(s []int) []int { slices.Sort(s); return s }",
			out: "return s[i] < s[j] })"},
		{name: "slices.BinarySearch of floats", src: "import \"slices\"\n\nfunc F(s []float64, v float64) int { i, _ := slices.BinarySearch(s, v); return i }",
			out: "(s[i] == t || s[i] != s[i] && t != t)"},
		{name: "slices.Max of floats as the builtin", src: "import \"slices\"\n\nfunc F(s []float64) float64 { return slices.Max(s) }",
			out: "if m != m { break }"},
		{name: "slices.Sort of an unknown type parameter", src: "import (\n\t\"cmp\"\n\t\"slices\"\n)\n\nfunc s[T cmp.Ordered](x []T) { slices.Sort(x) }\n\nfunc F(x []int) []int { s(x); return x }",
			refuse: "slices.Sort of a slice of T"},
		{name: "embedded struct marshaled", src: "import \"encoding/json\"\n\ntype base struct{ ID int }\n\ntype Item struct {\n\tbase\n\tName string\n}\n\nfunc F() string { b, _ := json.Marshal(Item{}); return string(b) }",
			refuse: "struct Item embeds base"},
		{name: "embedded struct in the result", src: "type base struct{ ID int }\n\ntype Item struct {\n\t*base\n\tName string\n}\n\nfunc F() []Item { return nil }",
			refuse: "struct Item embeds *base"},
		{name: "embedded struct kept inside", src: "type base struct{ ID int }\n\ntype item struct {\n\tbase\n}\n\nfunc F() int { return item{base{2}}.ID }",
			out: "item{base{2}}.ID"},
		{name: "nil pointer returned as error", src: "type E struct{}\n\nfunc (*E) Error() string { return \"\" }\n\nfunc F() error { var p *E; return p }",
			refuse: "p, a *E, becomes a error here"},
		{name: "nil slice assigned to error", src: "type E []int\n\nfunc (E) Error() string { return \"\" }\n\nfunc F() bool { var e E; var err error\n\terr = e\n\treturn err != nil }",
			refuse: "e, a E, becomes a error"},
		{name: "pointer passed to an error parameter", src: "type E struct{}\n\nfunc (*E) Error() string { return \"\" }\n\nfunc g(err error) bool { return err != nil }\n\nfunc F() bool { var p *E; return g(p) }",
			refuse: "p, a *E, becomes a error"},
		{name: "pointer built on the spot", src: "type E struct{}\n\nfunc (*E) Error() string { return \"\" }\n\nfunc F() error { return &E{} }",
			out: "return &E{}"},
		{name: "pointer variable never nil", src: "type E struct{}\n\nfunc (*E) Error() string { return \"\" }\n\nfunc F() error { p := &E{}\n\treturn p }",
			out: "return p"},
		{name: "pointer variable assigned again", src: "type E struct{}\n\nfunc (*E) Error() string { return \"\" }\n\nfunc F(ok bool) error { p := &E{}\n\tif ok {\n\t\tp = nil\n\t}\n\treturn p }",
			refuse: "p, a *E, becomes a error"},
		{name: "range over an int evaluates it once", src: "func F(n int) int { s := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s }",
			out: "for i, forge__v1 := int(0), int(n); i < forge__v1; i++ {"},
		{name: "range over an int whose key the body assigns", src: "func F(n int) int { s := 0\n\tfor i := range n {\n\t\ti += 2\n\t\ts += i\n\t}\n\treturn s }",
			out: "for forge__v2, forge__v1 := int(0), int(n); forge__v2 < forge__v1; forge__v2++ { i := forge__v2; "},
		{name: "clear of a map with float keys", src: "func F(m map[float64]int) int { clear(m)\n\treturn len(m) }",
			refuse: "a map whose keys may be NaN"},
		{name: "clear of a map with string keys", src: "func F(m map[string]int) int { clear(m)\n\treturn len(m) }",
			out: "func(m map[string]int) { for k := range m { delete(m, k) } }(m)"},
		{name: "nil pointer into any", src: "type E struct{}\n\nfunc F() bool { var p *E; var a any = p; return a != nil }",
			out: "var a any = p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _, _, err := prepare(sandbox.Source{Code: pre + tc.src})
			if tc.refuse != "" {
				se, ok := err.(*sandbox.Error)
				if !ok || se.Kind != sandbox.KindCompile || se.Hint == "" || !strings.Contains(se.Message, tc.refuse) {
					t.Fatalf("want a compile refusal with a hint naming %q, got %v", tc.refuse, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want a rewrite, got %v", err)
			}
			if !strings.Contains(code, tc.out) {
				t.Fatalf("rewritten source lacks %q:\n%s", tc.out, code)
			}
			if strings.Count(code[:strings.Index(code, tc.out)], "\n") > strings.Count(pre+tc.src, "\n") {
				t.Fatalf("the rewrite moved lines")
			}
		})
	}
}
