package sandbox_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestUnmarshalArg(t *testing.T) {
	type item struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Tags  []any  `json:"tags"`
	}
	for _, tc := range []struct {
		name string
		json string
		into func() any // a pointer to decode into
		want any        // what the pointer must point at afterwards
	}{
		{"int into any", `2`, func() any { return new(any) }, any(2)},
		{"negative int", `-7`, func() any { return new(any) }, any(-7)},
		{"float literal", `2.0`, func() any { return new(any) }, any(2.0)},
		{"exponent", `1e2`, func() any { return new(any) }, any(100.0)},
		{"past int64", `9223372036854775808`, func() any { return new(any) }, any(9223372036854775808.0)},
		{"max int64", `9223372036854775807`, func() any { return new(any) }, any(9223372036854775807)},
		{"string stays", `"2"`, func() any { return new(any) }, any("2")},
		{"nested", `[1, 2.5, [3], {"k": 4}, null, true]`, func() any { return new(any) },
			any([]any{1, 2.5, []any{3}, map[string]any{"k": 4}, nil, true})},
		{"slice of any", `[1, "a", 3.14]`, func() any { return new([]any) }, []any{1, "a", 3.14}},
		{"map of any", `{"a": 1, "b": 1.5}`, func() any { return new(map[string]any) }, map[string]any{"a": 1, "b": 1.5}},
		{"map of slices of any", `{"a": [1, 2.5]}`, func() any { return new(map[string][]any) }, map[string][]any{"a": {1, 2.5}}},
		{"struct field", `{"name": "x", "value": 3, "tags": [4, 5.5]}`, func() any { return new(item) },
			item{Name: "x", Value: 3, Tags: []any{4, 5.5}}},
		{"typed float unaffected", `2`, func() any { return new(float64) }, 2.0},
		{"typed ints unaffected", `[1, 2]`, func() any { return new([]int) }, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.into()
			require.NoError(t, sandbox.UnmarshalArg([]byte(tc.json), p))
			got := reflect.ValueOf(p).Elem().Interface()
			assert.Equal(t, tc.want, got)
			assert.Equal(t, fmt.Sprintf("%#v", tc.want), fmt.Sprintf("%#v", got), "dynamic types")
		})
	}
}

func TestUnmarshalArgPointers(t *testing.T) {
	var v struct {
		A *any
		B *[2]any
	}
	require.NoError(t, sandbox.UnmarshalArg([]byte(`{"A": 1, "B": [2, 3.5]}`), &v))
	require.NotNil(t, v.A)
	assert.Equal(t, any(1), *v.A)
	assert.Equal(t, [2]any{2, 3.5}, *v.B)
}

func TestUnmarshalArgErrors(t *testing.T) {
	var a any
	for _, in := range []string{`1e400`, `[1e400]`, `1 2`, `{"a":`, `"x"x`} {
		assert.Error(t, sandbox.UnmarshalArg([]byte(in), &a), in)
		assert.Error(t, json.Unmarshal([]byte(in), &a), "encoding/json agrees: %s", in)
	}
	var n []int
	err := sandbox.UnmarshalArg([]byte(`["a"]`), &n)
	var te *json.UnmarshalTypeError
	assert.ErrorAs(t, err, &te)
}

// An any parameter sees the JSON number 2 as the int 2 and 2.5 as a float64, as Go would type
// the same constants.
func ExampleUnmarshalArg() {
	var xs []any
	if err := sandbox.UnmarshalArg([]byte(`[2, 2.5, 2.0, "2"]`), &xs); err != nil {
		panic(err)
	}
	for _, x := range xs {
		fmt.Printf("%T ", x)
	}
	// Output: int float64 float64 string
}
