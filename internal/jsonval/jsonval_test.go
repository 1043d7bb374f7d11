package jsonval

import "testing"

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a": 1, "b": [1, 2]}`, `{"b":[1,2],"a":1}`, true},
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`100`, `1E2`, true},
		{`0.5`, `5e-1`, true},
		{`-0`, `0`, true},
		{`0.000e5`, `0`, true},
		{`"\u0041"`, `"A"`, true},
		{`null`, `null`, true},
		{` [true, false] `, `[true,false]`, true},
		{`2`, `1`, false},
		{`9007199254740993`, `9007199254740992`, false}, // equal as float64
		{`12345678901234567890`, `12345678901234567891`, false},
		{`-1`, `1`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`{"a": 1}`, `{"a": 1, "b": null}`, false},
		{`{"a": null}`, `{"b": null}`, false},
		{`"1"`, `1`, false},
		{`[]`, `{}`, false},
		{`null`, `false`, false},
		{`1e99999999999999999999`, `1e99999999999999999999`, true},
		{`1e99999999999999999999`, `1e99999999999999999998`, false},
		{`{`, `{`, false},
		{`1 2`, `1 2`, false},
		{``, ``, false},
	} {
		if got := Equal([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Equal([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v (swapped)", c.b, c.a, got, c.want)
		}
	}
}
