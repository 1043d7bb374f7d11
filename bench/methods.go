package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// method is one benchmark method: the code forge would have been given by a model, the args it
// is called with and the answer it must return.
type method struct {
	Role, Name string
	Kind       string
	Decl       string // the contract's declared signature
	Code       string
	Older      string // an earlier version of the code, for artifacts with more than one generation
	Args       json.RawMessage
	Want       json.RawMessage // compact JSON
}

// Method kinds: most methods are small arithmetic; every third runs a loop, every third uses
// strings, so that programs are not all identical; a chosen share imports slices (generic
// standard library code, which the interpreter loads on demand).
const (
	kindArith  = "arith"
	kindLoop   = "loop"
	kindString = "string"
	kindSlices = "slices"
)

// methodName and roleName are the names of method i and role r in a bench store.
func methodName(i int) string { return fmt.Sprintf("m%05d", i) }
func roleName(r int) string   { return fmt.Sprintf("r%04d", r) }

// makeMethods writes the n methods spread over roles roles (method i belongs to role i%roles).
// genericPct percent of them import slices.
func makeMethods(n, roles, genericPct int) []method {
	ms := make([]method, n)
	for i := range ms {
		ms[i] = makeMethod(i, roleName(i%roles), genericPct)
	}
	return ms
}

func makeMethod(i int, role string, genericPct int) method {
	name := methodName(i)
	fn := sandbox.ExportedName(name)
	c := i%997 + 1 // the per-method constant: every program is distinct
	m := method{Role: role, Name: name}
	want := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // only ints, strings
		}
		return b
	}
	switch {
	case i%100 < genericPct:
		// Not slices.Clone: yaegi v0.16.1 cannot compile it ("undefined type for E").
		m.Kind = kindSlices
		m.Decl = fmt.Sprintf("func %s(xs []int) int", fn)
		m.Code = fmt.Sprintf("package artifact\n\nimport \"slices\"\n\n// %s returns the largest element times %d.\nfunc %s(xs []int) int {\n\tys := append([]int(nil), xs...)\n\tslices.Sort(ys)\n\treturn ys[len(ys)-1] * %d\n}\n", fn, c, fn, c)
		m.Older = fmt.Sprintf("package artifact\n\nimport \"slices\"\n\nfunc %s(xs []int) int {\n\treturn slices.Max(xs) * %d\n}\n", fn, c)
		xs := []int{3, i % 50, 7, 1}
		m.Args = want(map[string]any{"xs": xs})
		m.Want = want(slices.Max(xs) * c)
	case i%3 == 0:
		m.Kind = kindArith
		m.Decl = fmt.Sprintf("func %s(x int) int", fn)
		m.Code = fmt.Sprintf("package artifact\n\n// %s is x*%d + %d.\nfunc %s(x int) int {\n\treturn x*%d + %d\n}\n", fn, c, i, fn, c, i)
		m.Older = fmt.Sprintf("package artifact\n\nfunc %s(x int) int {\n\treturn %d*x + %d\n}\n", fn, c, i)
		x := i%100 + 1
		m.Args = want(map[string]any{"x": x})
		m.Want = want(x*c + i)
	case i%3 == 1:
		m.Kind = kindLoop
		m.Decl = fmt.Sprintf("func %s(n int) int", fn)
		m.Code = fmt.Sprintf("package artifact\n\n// %s folds 0..n-1 into a hash seeded with %d.\nfunc %s(n int) int {\n\ts := %d\n\tfor i := 0; i < n; i++ {\n\t\ts = (s*31 + i) %% 1000003\n\t}\n\treturn s\n}\n", fn, c, fn, c)
		m.Older = fmt.Sprintf("package artifact\n\nfunc %s(n int) int {\n\ts := %d\n\tfor i := range n {\n\t\ts = (s*31 + i) %% 1000003\n\t}\n\treturn s\n}\n", fn, c)
		n := 10 + i%20
		s := c
		for k := 0; k < n; k++ {
			s = (s*31 + k) % 1000003
		}
		m.Args = want(map[string]any{"n": n})
		m.Want = want(s)
	default:
		m.Kind = kindString
		m.Decl = fmt.Sprintf("func %s(s string) string", fn)
		m.Code = fmt.Sprintf("package artifact\n\nimport \"strings\"\n\n// %s upper-cases s and tags it with %d.\nfunc %s(s string) string {\n\treturn strings.ToUpper(s) + \"-%d\"\n}\n", fn, c, fn, c)
		m.Older = fmt.Sprintf("package artifact\n\nimport \"strings\"\n\nfunc %s(s string) string {\n\treturn strings.ToUpper(s) + \"-\" + \"%d\"\n}\n", fn, c)
		s := fmt.Sprintf("call%d", i%10)
		m.Args = want(map[string]any{"s": s})
		m.Want = want(strings.ToUpper(s) + fmt.Sprintf("-%d", c))
	}
	return m
}
