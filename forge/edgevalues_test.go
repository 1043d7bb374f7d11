package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// edgeMethod is one method of the edge-values role: its declared signature, its code and the args
// of its calls.
type edgeMethod struct {
	decl, code string
	args       []string // each is called first (the generating call, for the first) and warm
}

// edgeMethods are the shapes a newcomer tries first: no args, no result, only an error, a nil
// result, unicode, integers at the edges of int64/uint64 and of float64's exact integers, NaN and
// infinities, nested structs with pointers, maps and slices.
var edgeMethods = map[string]edgeMethod{
	"zero":  {"func Zero() string", "func Zero() string { return \"z\" }", []string{``, `{}`, `[]`}},
	"touch": {"func Touch(s string)", "func Touch(s string) { _ = s }", []string{`{"s":"x"}`}},
	"check": {"func Check(n int) error",
		"import \"errors\"\n\nfunc Check(n int) error {\n\tif n < 0 {\n\t\treturn errors.New(\"negative: ünïcode ✓\")\n\t}\n\treturn nil\n}",
		[]string{`{"n":-1}`, `{"n":1}`}},
	"div": {"func Div(a, b int) (int, error)",
		"import \"errors\"\n\nfunc Div(a, b int) (int, error) {\n\tif b == 0 {\n\t\treturn 0, errors.New(\"division by zero\")\n\t}\n\treturn a / b, nil\n}",
		[]string{`{"a":7,"b":0}`, `{"a":7,"b":2}`}},
	"nils": {"func Nils(k int) any",
		"type P struct{ X int }\n\nfunc Nils(k int) any {\n\tswitch k {\n\tcase 0:\n\t\tvar s []int\n\t\treturn s\n\tcase 1:\n\t\tvar m map[string]int\n\t\treturn m\n\tcase 2:\n\t\tvar p *P\n\t\treturn p\n\t}\n\treturn nil\n}",
		[]string{`{"k":0}`, `{"k":1}`, `{"k":2}`, `{"k":3}`}},
	"nil_slice": {"func NilSlice() []string", "func NilSlice() []string { return nil }", []string{`{}`}},
	"rev": {"func Rev(s string) string",
		"func Rev(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}",
		[]string{`{"s":"héllo, 世界 😀"}`, `{"s":"\u00e9\ud83d\ude00 <&> \"q\" \\ \n"}`, `{"s":""}`}},
	"ints": {"func Ints(a int64, b uint64, c int8) []any", "func Ints(a int64, b uint64, c int8) []any { return []any{a, b, c, a - 1, b - 1} }",
		[]string{`{"a":9223372036854775807,"b":18446744073709551615,"c":-128}`, `{"a":-9223372036854775808,"b":0,"c":127}`}},
	"floats": {"func Floats(x float64, k int) float64",
		"import \"math\"\n\nfunc Floats(x float64, k int) float64 {\n\tswitch k {\n\tcase 1:\n\t\treturn math.NaN()\n\tcase 2:\n\t\treturn math.Inf(1)\n\tcase 3:\n\t\treturn math.Inf(-1)\n\tcase 4:\n\t\treturn -0.0 * x\n\t}\n\treturn x\n}",
		[]string{`{"x":9007199254740993,"k":0}`, `{"x":1e308,"k":0}`, `{"x":5e-324,"k":0}`, `{"x":0.1,"k":1}`, `{"x":0.1,"k":2}`, `{"x":0.1,"k":3}`, `{"x":1,"k":4}`}},
	"nest": {"func Nest(in Outer) Outer",
		"type Inner struct {\n\tC map[string]*int `json:\"c\"`\n\tD []float64     `json:\"d,omitempty\"`\n}\n\ntype Outer struct {\n\tName string  `json:\"name\"`\n\tIn   []Inner `json:\"in\"`\n\tP    *Inner  `json:\"p\"`\n\tAny  any     `json:\"any\"`\n}\n\nfunc Nest(in Outer) Outer {\n\tin.Name += \"!\"\n\treturn in\n}",
		[]string{`{"in":{"name":"ñ","in":[{"c":{"a":1,"b":null}},{"c":{},"d":[1.5,-2]}],"p":null,"any":{"k":[1,"2",true,null,{"x":1.25}]}}}`,
			`{"in":{"name":"","in":null,"p":{"c":null},"any":12345678901234567890}}`}},
}

func edgeContract(isolation string) registry.Contract {
	c := registry.Contract{Role: "edge", Purpose: "edge values", Methods: map[string]string{}}
	if isolation != "" {
		c.Limits = &registry.Limits{Isolation: isolation}
	}
	for m, e := range edgeMethods {
		c.Methods[m] = e.decl
	}
	return c
}

// edgeAnswers writes each method's code.
func edgeAnswers() *funcProvider {
	return &funcProvider{fn: func(_ int, r provider.Request) (provider.Answer, error) {
		e, ok := edgeMethods[r.Method]
		if !ok {
			return provider.Answer{}, fmt.Errorf("no code for %s", r.Method)
		}
		c := "package artifact\n\n" + e.code + "\n"
		return provider.Answer{Code: c, Raw: c, Model: "func"}, nil
	}}
}

// edgeAnswer is what a call answered, in the terms a caller sees: ok, the value, the error's type,
// class and rule (messages are compared apart: they may name the backend's own words).
type edgeAnswer struct {
	OK                bool
	Value             string
	Type, Class, Rule string
	Message           string
}

// brief is the answer without the rule and the message.
func (a edgeAnswer) brief() edgeAnswer {
	a.Rule, a.Message = "", ""
	return a
}

func answerOf(o *Outcome) edgeAnswer {
	a := edgeAnswer{OK: o.OK, Value: string(o.Value)}
	if o.Err != nil {
		a.Type, a.Class, a.Rule, a.Message = o.Err.Type, o.Err.Class, o.Err.Rule, o.Err.Message
	}
	return a
}

// TestEdgeValuesFirstWarmAndBackendsAlike: every edge method answers its generating call, its
// warm calls, and on wasm and yaegi (in-process and in worker processes) the same: value for
// value, error type, class and rule for error.
func TestEdgeValuesFirstWarmAndBackendsAlike(t *testing.T) {
	backends := []string{"yaegi", "yaegi-isolated", "wasm"}
	if testing.Short() {
		backends = backends[:1]
	}
	got := map[string]map[string]edgeAnswer{} // backend -> "method args" -> answer
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			backend, isolated := strings.CutSuffix(be, "-isolated")
			f := openForge(t, t.TempDir(), edgeAnswers(), func(o *Options) { o.DefaultSandbox = backend })
			isolation := ""
			if isolated {
				isolation = "process"
			}
			require.NoError(t, f.AddRole(edgeContract(isolation)))
			got[be] = map[string]edgeAnswer{}
			ctx := context.Background()
			for m, e := range edgeMethods {
				for i, args := range e.args {
					first := f.Call(ctx, "edge", m, json.RawMessage(args))
					if i == 0 {
						require.Equal(t, SourceGenerated, first.Meta.ProgramSource, "%s %s: %+v", m, args, first.Err)
					}
					warm := f.Call(ctx, "edge", m, json.RawMessage(args))
					require.Equal(t, SourcePersisted, warm.Meta.ProgramSource, "%s %s: %+v", m, args, warm.Err)
					again := f.Call(ctx, "edge", m, json.RawMessage(args))
					a := answerOf(&first)
					// The rule and message may differ: a first failure on these args was the
					// code's until shown otherwise (input_specific), a repeat of it is the
					// input's (input_repeated); what the caller gets is the same.
					w := answerOf(&warm)
					assert.Equal(t, a.brief(), w.brief(), "%s %s on %s: the first call and the warm call", m, args, be)
					assert.Equal(t, w, answerOf(&again), "%s %s on %s: two warm calls", m, args, be)
					got[be][m+" "+args] = a
				}
			}
		})
	}
	for _, be := range backends[1:] {
		for k, want := range got[backends[0]] {
			a := got[be][k]
			assert.Equal(t, want.Message, a.Message, "%s: %s and %s say it alike", k, backends[0], be)
			want.Message, a.Message = "", ""
			assert.Equal(t, want, a, "%s: %s and %s answer alike", k, backends[0], be)
		}
	}
	for k, a := range got[backends[0]] {
		t.Logf("%-60s ok=%v value=%s %s/%s/%s %s", k, a.OK, a.Value, a.Class, a.Type, a.Rule, a.Message)
	}
}
