package wasm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestLeanSignature(t *testing.T) {
	for typ, want := range map[string]bool{
		"int": true, "int64": true, "float64": true, "string": true, "bool": true, "[]int": true, "[][]string": true,
		"map[string]int": true, "map[string][]float64": true, "[]map[string]bool": true,
		"int32": false, "uint": false, "float32": false, "byte": false, "[]byte": false, "rune": false, "any": false,
		"interface{}": false, "[]any": false, "map[int]int": false, "*int": false, "Point": false, "[2]int": false,
		"struct{ X int }": false, "func()": false, "chan int": false,
	} {
		_, got := parseLeanType(typ, false)
		assert.Equal(t, want, got, "parameter %s", typ)
	}
	for typ, want := range map[string]bool{"[2]int": true, "[3]float64": true, "[2][2]int": false, "[]([2]int)": false, "[N]int": false} {
		_, got := parseLeanType(typ, true)
		assert.Equal(t, want, got, "result %s", typ)
	}
	assert.False(t, panicNeedsFmt("package artifact\n\nfunc F(n int) int { return n }\n"))
	assert.True(t, panicNeedsFmt("package artifact\n\nfunc F(n int) int { if n < 0 { panic(n) }; return n }\n"))
	assert.True(t, panicNeedsFmt("package artifact\n\nimport \"fmt\"\n\nfunc F(n int) string { return fmt.Sprint(n) }\n"))
}

// TestLeanDispatcherMatchesJSON runs the same artifacts built with the lean dispatcher and with
// the encoding/json one, and requires the same result bytes and the same errors for every args
// (well-formed, odd, and ill-typed ones the host decodes for the lean guest).
func TestLeanDispatcherMatchesJSON(t *testing.T) {
	cases := []struct {
		code string
		args []string
	}{
		{"package artifact\n\nfunc Id(n int, x float64, s string, b bool) []string {\n\tif !b {\n\t\treturn nil\n\t}\n\treturn []string{s, s + \"<&>\"}\n}\n",
			[]string{`[1, 1.5, "a", true]`, `[1, 1.5, "a", false]`, `{"n": -0, "x": 1e400, "s": "x", "b": true}`,
				`[1, 2, "\ud83d\ude00 \u00e9 \u2028", true]`, `[1, 2, "\ud800", true]`, "[1, 2, \"bad \xff\", true]",
				`[9223372036854775808, 0, "", true]`, `[1.5, 0, "", true]`, `["1", 0, "", true]`, `[1, "x", "", true]`,
				`[1, 0, 5, true]`, `[1, 0, "", "true"]`, `[null, null, null, null]`, `[1, 0, "s"]`, `[1e2, 0, "", true]`}},
		{"package artifact\n\nfunc Grid(g [][]int, m map[string][]float64) map[string][]float64 {\n\tif m == nil {\n\t\treturn nil\n\t}\n\tfor i, row := range g {\n\t\tfor _, v := range row {\n\t\t\tm[string(rune('a'+i))] = append(m[string(rune('a'+i))], float64(v)/3)\n\t\t}\n\t}\n\treturn m\n}\n",
			[]string{`[[[1,2],[3]], {"z": [1e-7, 1e21, -0.0]}]`, `[[], {}]`, `[null, null]`, `[[[1],null,[]], {"<b>": []}]`,
				`[[[1, "x"]], {}]`, `[[1], {}]`, `[[[1]], {"a": [1, null]}]`, `[[[1]], {"a": 1}]`, `[[[1]], []]`,
				`[[ [ 1 ] , [ 2 ] ], { "a" : [ 1.5 ] , "a" : [ 2.5 ] }]`}},
		{"package artifact\n\nimport \"math\"\n\nfunc Sqrt(x float64) (float64, error) {\n\treturn math.Sqrt(x), nil\n}\n",
			[]string{`[4]`, `[2]`, `[-1]`, `[0.0000001]`, `[1e300]`}},
		{"package artifact\n\nimport \"errors\"\n\nfunc Pick(xs []int, i int) ([3]int, error) {\n\tif i < 0 {\n\t\treturn [3]int{}, errors.New(\"negative <index> & \\\"more\\\"\")\n\t}\n\treturn [3]int{xs[i], i, len(xs)}, nil\n}\n",
			[]string{`[[5, 6], 1]`, `[[5, 6], -1]`, `[[5, 6], 7]`, `[null, 0]`}},
		{"package artifact\n\ntype code int\n\nfunc Boom(n int) int {\n\tif n > 0 {\n\t\tpanic(code(n))\n\t}\n\tvar m map[string]int\n\tm[\"x\"] = n\n\treturn n\n}\n",
			[]string{`[3]`, `[0]`}},
		{"package artifact\n\nimport \"strings\"\n\nfunc Rep(s string, n int) string {\n\treturn strings.Repeat(s, n)\n}\n",
			[]string{`["ab", 2]`, `["ab", -1]`, `["\u003c", 3]`}},
	}
	ctx := context.Background()
	for _, c := range cases {
		run := func(legacy bool) []string {
			noLean = legacy
			defer func() { noLean = false }()
			p, err := shared.Compile(ctx, sandbox.Source{Code: c.code})
			require.NoError(t, err)
			defer p.Close()
			var outs []string
			for _, a := range c.args {
				out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(a)})
				if err != nil {
					e := sandbox.AsError(err)
					require.NotNil(t, e, "args %s: %v", a, err)
					outs = append(outs, "error "+string(e.Kind)+" param="+e.Param+" line="+itoa(e.Line)+" hint="+e.Hint+": "+e.Message)
					continue
				}
				outs = append(outs, "value "+string(out.Value))
			}
			return outs
		}
		lean, legacy := run(false), run(true)
		for i, a := range c.args {
			assert.Equal(t, legacy[i], lean[i], "%s with args %s", strings.SplitN(c.code, "\n", 4)[2], a)
		}
		t.Logf("%s: %s", strings.SplitN(c.code, "\n", 4)[2], strings.Join(lean, " | "))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// BenchmarkLeanWarmCall compares a warm call through the lean dispatcher with the same call
// through the encoding/json one (same run), for a few argument shapes.
func BenchmarkLeanWarmCall(b *testing.B) {
	nums := make([]int, 100)
	for i := range nums {
		nums[i] = i * 37
	}
	numsJSON, _ := json.Marshal(nums)
	cases := []struct {
		name, code, args, want string
	}{
		{"ints", benchCode, `[1, 2]`, "3"},
		{"slice100", "package artifact\n\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n",
			`[` + string(numsJSON) + `]`, "183150"},
		{"strings", "package artifact\n\nfunc Words(s string) []string {\n\treturn []string{s, s + \"!\"}\n}\n", `["héllo <w>"]`,
			`["héllo \u003cw\u003e","héllo \u003cw\u003e!"]`},
	}
	ctx := context.Background()
	for _, c := range cases {
		for _, legacy := range []bool{false, true} {
			name := c.name + "/lean"
			if legacy {
				name = c.name + "/json"
			}
			b.Run(name, func(b *testing.B) {
				noLean = legacy
				p, err := shared.Compile(ctx, sandbox.Source{Code: c.code})
				noLean = false
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				in := sandbox.Input{Args: json.RawMessage(c.args)}
				b.ReportAllocs()
				for b.Loop() {
					out, err := shared.Run(ctx, p, in)
					if err != nil || string(out.Value) != c.want {
						b.Fatal(string(out.Value), err)
					}
				}
			})
		}
	}
}
