package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

const argsDecl = "func F(c int, s string, b int8, u uint, x *int, xs []int, p P, arr [2]int) int"

const argsCode = "package artifact\n\ntype P struct {\n\tX int `json:\"x\"`\n}\n\n" + argsDecl +
	" {\n\tn := c + 32 + len(s) + int(b) + int(u) + len(xs) + p.X + arr[0] + arr[1]\n\tif x != nil {\n\t\tn += *x\n\t}\n\treturn n\n}\n"

func argsContract() registry.Contract {
	return registry.Contract{Role: "tmp", Purpose: "args", Methods: map[string]string{"f": argsDecl}}
}

// withArg is the valid args {"c":0,...} with one parameter's raw JSON replaced (or added).
func withArg(name, raw string) json.RawMessage {
	obj := map[string]json.RawMessage{"c": json.RawMessage(`0`), "s": json.RawMessage(`""`), "b": json.RawMessage(`0`), "u": json.RawMessage(`0`),
		"x": json.RawMessage(`null`), "xs": json.RawMessage(`[]`), "p": json.RawMessage(`{"x":0}`), "arr": json.RawMessage(`[0,0]`)}
	if name != "" {
		obj[name] = json.RawMessage(raw)
	}
	b, _ := json.Marshal(obj)
	return b
}

// Issue 23 item 3: args are checked against the parameter schema the method publishes (MCP's
// input schema): the verdict of a JSON Schema validator on the published schema is the call's, in
// both backends; an argument the schema refuses is a caller error naming the parameter, never a
// silent zero ({"c":null} answered 32).
func TestArgsAgreeWithThePublishedSchema(t *testing.T) {
	cases := []struct {
		param, raw string
	}{
		{"", ""}, {"c", "null"}, {"s", "null"}, {"c", `"abc"`}, {"c", "1.5"}, {"c", "-3"}, {"b", "127"}, {"b", "300"}, {"b", "-129"},
		{"u", "-1"}, {"u", "7"}, {"x", "null"}, {"x", "5"}, {"xs", "null"}, {"xs", "[1,null]"}, {"xs", "[1,2]"}, {"p", "null"},
		{"p", `{"x":null}`}, {"p", `{"x":3}`}, {"arr", "[1]"}, {"arr", "[1,2,3]"}, {"arr", "null"}, {"arr", "[1,2]"},
		{"s", "5"}, {"zzz", "1"}, {"c", "9223372036854775808"},
	}
	for _, be := range []string{"yaegi", "wasm"} {
		t.Run(be, func(t *testing.T) {
			f := openForge(t, t.TempDir(), codeAnswers(argsCode), func(o *Options) { o.DefaultSandbox = be })
			require.NoError(t, f.AddRole(argsContract()))
			o := f.Call(context.Background(), "tmp", "f", withArg("", ""))
			require.True(t, o.OK, "%+v", o.Err)
			art, err := f.Store().Load("tmp", "f")
			require.NoError(t, err)
			schema := compileSchema(t, art.Signature.ParamsSchema)
			for _, tc := range cases {
				args := withArg(tc.param, tc.raw)
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
				require.NoError(t, err)
				valid := schema.Validate(inst) == nil
				o := f.Call(context.Background(), "tmp", "f", args)
				if valid {
					assert.True(t, o.OK, "%s=%s: the schema takes it: %+v", tc.param, tc.raw, o.Err)
					continue
				}
				if !assert.False(t, o.OK, "%s=%s: the schema refuses it, the call answered %s", tc.param, tc.raw, o.Value) {
					continue
				}
				assert.Equal(t, "caller", o.Err.Class, "%s=%s: %+v", tc.param, tc.raw, o.Err)
				assert.Equal(t, "args", o.Err.Type, "%s=%s: %+v", tc.param, tc.raw, o.Err)
				assert.Contains(t, o.Err.Message, "param "+tc.param, "%s=%s: %+v", tc.param, tc.raw, o.Err)
			}
			// Stricter than a JSON Schema validator: "integer" takes 2.0 and 1e2 (integral
			// values), which Go's decoder refuses; the call says so, naming the parameter.
			for _, raw := range []string{"2.0", "1e2"} {
				o := f.Call(context.Background(), "tmp", "f", withArg("c", raw))
				require.False(t, o.OK, raw)
				assert.Equal(t, "caller", o.Err.Class)
				assert.Contains(t, o.Err.Message, "param c")
			}
		})
	}
}

func compileSchema(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	comp := jsonschema.NewCompiler()
	require.NoError(t, comp.AddResource("params.json", doc))
	s, err := comp.Compile("params.json")
	require.NoError(t, err)
	return s
}

// The generating call checks its args against the contract's declared signature before any
// provider call: a null, a value of another type (the MCP Inspector's c=abc) or one out of its
// type's range is refused with no code written for it.
func TestArgsRefusedBeforeGeneration(t *testing.T) {
	for _, c := range []struct{ param, raw, want string }{
		{"c", "null", "param c"},
		{"c", `"abc"`, "/c"},
		{"s", `5`, "/s"},
		{"u", `-1`, "/u"},
		{"xs", `{"a":1}`, "/xs"},
	} {
		t.Run(c.param+"="+c.raw, func(t *testing.T) {
			p := codeAnswers(argsCode)
			f := openForge(t, t.TempDir(), p)
			require.NoError(t, f.AddRole(argsContract()))
			o := f.Call(context.Background(), "tmp", "f", withArg(c.param, c.raw))
			require.False(t, o.OK, "answered %s", o.Value)
			assert.Equal(t, "caller", o.Err.Class)
			assert.Equal(t, "args", o.Err.Type)
			assert.Contains(t, o.Err.Message, c.want)
			assert.Zero(t, o.Meta.ProviderCalls)
			assert.Empty(t, p.requests())
			_, err := f.Store().Load("tmp", "f")
			assert.ErrorIs(t, err, registry.ErrNotFound)
		})
	}
}

// TestArgsErrorsSayWhatToSend: an argument of the wrong JSON type was refused in encoding/json's
// words alone ("want string: json: cannot unmarshal number into Go value of type string"), with no
// next step, over HTTP and the library (MCP's schema check said one); every args error of a call
// now says what to send, on the generating call and on a warm one.
func TestArgsErrorsSayWhatToSend(t *testing.T) {
	f := openForge(t, t.TempDir(), codeAnswers("package artifact\n\nfunc Upper(s string) string { return s }\n"), func(o *Options) { o.DefaultSandbox = "yaegi" })
	require.NoError(t, f.AddRole(registry.Contract{Role: "text", Purpose: "p", Methods: map[string]string{"upper": "func Upper(s string) string"}}))
	for i, args := range []string{`{"s":3}`, `{"s":"ok"}`, `{"s":3}`, `[true]`, `{"t":"x"}`, `{}`, `{"s":null}`} {
		o := f.Call(context.Background(), "text", "upper", json.RawMessage(args))
		if args == `{"s":"ok"}` {
			require.True(t, o.OK, "%+v", o.Err)
			continue
		}
		require.False(t, o.OK, args)
		assert.Equal(t, TypeArgs, o.Err.Type, args)
		assert.Contains(t, o.Err.Message, "(hint: ", "call %d %s: %s", i, args, o.Err.Message)
	}
}
