package registry

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func problemFields(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Field)
	}
	return out
}

// TestCheckMethodNameVsSignature: a method whose signature declares another function than the
// method's own (wordcount -> Wordcount, not WordCount) could never pass the gate; Check refuses it
// and names both fixes. Validate keeps taking it (stored contracts must stay readable).
func TestCheckMethodNameVsSignature(t *testing.T) {
	c := Contract{Role: "text", Purpose: "p", Methods: map[string]string{"wordcount": "func WordCount(s string) int"}}
	require.NoError(t, c.Validate(), "stored contracts are read through Validate")
	ps := c.Check(Maxima{})
	require.Len(t, ps, 1)
	assert.Equal(t, "methods.wordcount", ps[0].Field)
	assert.Contains(t, ps[0].Message, "declares func WordCount")
	assert.Contains(t, ps[0].Message, "declare it as func Wordcount")
	assert.Contains(t, ps[0].Message, `name the method "word_count"`)
	assert.ErrorIs(t, ps[0].Err, ErrInvalidContract)

	for _, ok := range []map[string]string{
		{"word_count": "func WordCount(s string) int"},
		{"wordcount": "func Wordcount(s string) int"},
		{"upper": ""},
	} {
		c := Contract{Role: "text", Purpose: "p", Methods: ok}
		assert.Empty(t, c.Check(Maxima{}), "%v", ok)
	}
}

// TestCheckReturnsEveryProblem: Check lists every problem of a contract, not just the first.
func TestCheckReturnsEveryProblem(t *testing.T) {
	data := `{"role":"text","purpose":"","methods":{"wordcount":"func WordCount(s string) int","upper":"func Upper(s string) string"},
	  "deliverable":{"type":"integer"},
	  "capabilities":{"log":true,"fs":true,"http":{"allow":["x.com"],"proxy":"p"}},
	  "acceptance":{"examples":[
	    {"method":"upper","args":{"text":"a"},"expect":1},
	    {"method":"upper","args":{"s":3},"expect":1},
	    {"method":"upper","args":{"s":"a"},"expect":"A"},
	    {"method":"upper","args":["a"],"expect":2}]},
	  "limits":{"memory":"1048576MB","timeout":"24h","output":"1048576MB"}}`
	c, ps := CheckContract([]byte(data), Maxima{})
	assert.Equal(t, "text", c.Role)
	assert.ElementsMatch(t, []string{
		"capabilities.fs", "capabilities.http.proxy", // unknown fields, all of them
		"purpose",
		"methods.wordcount",
		"acceptance.examples[0].args", // no parameter "text"
		"acceptance.examples[1].args", // s is a string
		"acceptance.examples[2].expect",
		"limits.timeout", "limits.memory", "limits.output",
	}, problemFields(ps), "%v", ps)
	for _, p := range ps {
		require.Error(t, p.Err, p.Field)
		assert.ErrorIs(t, p.Err, ErrInvalidContract, p.Field)
		switch p.Field {
		case "capabilities.fs":
			assert.Contains(t, p.Message, "unknown capability")
			assert.Contains(t, p.Message, "http, log, now, rand, call")
		case "limits.memory":
			assert.Contains(t, p.Message, "maximum of 1GiB (FORGE_MAX_MEMORY)")
		case "limits.timeout":
			assert.Contains(t, p.Message, "maximum of 1m0s (FORGE_MAX_TIMEOUT)")
		case "limits.output":
			assert.Contains(t, p.Message, "maximum of 64MiB (FORGE_MAX_OUTPUT)")
		}
	}

	// The operator's maxima, raised, let the same limits through.
	_, ps = CheckContract([]byte(`{"role":"text","purpose":"p","limits":{"memory":"2GiB","timeout":"90s","output":"128MiB"}}`),
		Maxima{Memory: 4 << 30, Timeout: 2 * time.Minute, Output: 1 << 30})
	assert.Empty(t, ps)
	_, ps = CheckContract([]byte(`{"role":"text","purpose":"p","limits":{"memory":"1GiB","timeout":"60s","output":"64MiB"}}`), Maxima{})
	assert.Empty(t, ps, "the defaults themselves are allowed")
}

func TestCheckContractSyntax(t *testing.T) {
	for in, want := range map[string]string{
		`{"role":`:                         "unexpected EOF (at line 1, column 8)",
		`{"role":"text","purpose":"p"} {}`: "trailing data",
		`{"role":"text","purpose":5}`:      "purpose: got a JSON number, want a string",
		"{\"role\":\"t\xff\"}":             "UTF-8",
	} {
		_, ps := CheckContract([]byte(in), Maxima{})
		require.Len(t, ps, 1, in)
		assert.True(t, strings.Contains(ps[0].Message, want), "%s: %s", in, ps[0].Message)
		assert.ErrorIs(t, ps[0].Err, ErrInvalidContract)
	}
}

// TestContractJSONSaysWhatToWrite: a contract whose JSON cannot be read (over HTTP and MCP as
// much as from a file) was reported in encoding/json's words, Go's type names and no field
// ("json: cannot unmarshal string into Go struct field Contract.methods of type
// map[string]string", "unexpected EOF"); each now says where, which field, and what to write.
func TestContractJSONSaysWhatToWrite(t *testing.T) {
	for _, c := range []struct{ in, field, want string }{
		{``, "", `the contract is empty: write one JSON object, e.g. {"role": "text"`},
		{"{\"role\": \"x\",\n \"purpose\": ", "", "not valid JSON: unexpected EOF (at line 2, column 11); write one JSON object, e.g. {"},
		{`[1, 2]`, "", `a contract is a JSON object, got a JSON array: write one object, e.g. {"role"`},
		{`"text"`, "", `a contract is a JSON object, got a JSON string`},
		{`{"role":"x","purpose":"p","methods":"A"}`, "methods", `methods: got a JSON string, want an object, e.g. "methods": {"upper": "func Upper(s string) string"}`},
		{`{"role":"x","purpose":"p","methods":{"a":3}}`, "methods", `methods: got a JSON number, want a string, e.g. "methods": {"upper"`},
		{`{"role":"x","purpose":"p","capabilities":{"log":"yes"}}`, "capabilities.log", `capabilities.log: got a JSON string, want true or false`},
		{`{"role":"x","purpose":"p","limits":[1]}`, "limits", `limits: got a JSON array, want an object, e.g. "limits": {"timeout"`},
		{"\xef\xbb\xbf{\"role\":\"x\"}", "", "(at line 1, column 1): it starts with a byte-order mark; save it as UTF-8 without one"},
		{`{"role":"x","purpose":"p",}`, "", "(at line 1, column 27): JSON takes no comma before a closing }"},
		{`{"role":"x","methods":{"a":"func A() int",` + "\n" + `]}`, "", "JSON takes no comma before a closing ]"},
		{`{'role':'x'}`, "", "JSON strings and keys take double quotes"},
	} {
		_, ps := CheckContract([]byte(c.in), Maxima{})
		require.Len(t, ps, 1, c.in)
		assert.Equal(t, c.field, ps[0].Field, c.in)
		assert.Contains(t, ps[0].Message, c.want, c.in)
		assert.NotContains(t, ps[0].Message, "Go struct", c.in)
		assert.ErrorIs(t, ps[0].Err, ErrInvalidContract)
		_, err := DecodeContract([]byte(c.in))
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, "DecodeContract (role add, stored contracts) says the same: %s", c.in)
	}
}

// TestCheckAcceptanceReachesTheMethods: acceptance parts that could never run against a method's
// code (tests that call none of the methods' functions, tests for a method not in methods) or
// that every method would have to pass (an example naming no method in a role of several) are
// problems.
func TestCheckAcceptanceReachesTheMethods(t *testing.T) {
	c := Contract{Role: "text", Purpose: "p",
		Methods: map[string]string{"upper": "func Upper(s string) string", "lower": "func Lower(s string) string"},
		Acceptance: &Acceptance{
			Examples:    []Example{{Args: []byte(`{"s":"a"}`), Expect: []byte(`"A"`)}},
			Tests:       "package artifact\nimport \"testing\"\nfunc TestX(t *testing.T) { _ = Capitalize(\"a\") }",
			MethodTests: map[string]string{"title": "package artifact"},
		}}
	require.NoError(t, c.Validate())
	assert.ElementsMatch(t, []string{"acceptance.examples[0].method", "acceptance.method_tests.title", "acceptance.tests"}, problemFields(c.Check(Maxima{})))

	c.Acceptance = &Acceptance{Examples: []Example{{Method: "upper", Args: []byte(`{"s":"a"}`), Expect: []byte(`"A"`)}},
		Tests: "package artifact\nimport \"testing\"\nfunc TestX(t *testing.T) { _ = Lower(\"A\") }", MethodTests: map[string]string{"upper": "package artifact"}}
	assert.Empty(t, c.Check(Maxima{}))
}

// TestCheckAsksTheRegisteredBackends: role add takes a sandbox only if a backend of that name is
// registered in this program, and the refusal lists those that are; Validate (how stored contracts
// are read) takes any well-formed backend name, so a store stays readable by a program built
// without one of its backends.
func TestCheckAsksTheRegisteredBackends(t *testing.T) {
	sandbox.Register(sandbox.Backend{Name: "checkprobe", Summary: "test",
		New: func(sandbox.Config) (sandbox.Sandbox, error) { return nil, nil }})
	c := Contract{Role: "text", Purpose: "p", Methods: map[string]string{"upper": ""}, Sandbox: "checkprobe"}
	assert.Empty(t, c.Check(Maxima{}))

	c.Sandbox = "lua"
	require.NoError(t, c.Validate(), "stored contracts are read through Validate")
	ps := c.Check(Maxima{})
	require.Len(t, ps, 1)
	assert.Equal(t, "sandbox", ps[0].Field)
	assert.Contains(t, ps[0].Message, `sandbox "lua" is unknown`)
	assert.Contains(t, ps[0].Message, "checkprobe")

	c.Sandbox = "Not A Name"
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "checkprobe", "says which names to use")
}
