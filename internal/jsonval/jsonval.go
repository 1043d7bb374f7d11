// Package jsonval compares JSON documents by the values they denote: the one comparison of a
// method's answer with an expected value (acceptance examples, the corpus, bench) and of a record
// with its copy (store migration).
package jsonval

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Equal reports whether a and b are JSON documents that denote the same value: objects with the
// same members in any order, arrays element by element, strings after unescaping, and numbers by
// their exact decimal value (1, 1.0 and 1e0 are equal; 9007199254740993 and 9007199254740992 are
// not, which decoding into float64 would confuse). Invalid JSON equals nothing, itself included.
func Equal(a, b []byte) bool {
	x, ok := decode(a)
	if !ok {
		return false
	}
	y, ok := decode(b)
	return ok && equal(x, y)
}

func decode(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data: not one document
	}
	return v, true
}

func equal(x, y any) bool {
	switch x := x.(type) {
	case map[string]any:
		y, ok := y.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := y.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := y.(json.Number)
		return ok && canonical(string(x)) == canonical(string(y))
	default: // string, bool, nil
		return x == y
	}
}

// canonical writes a JSON number as sign, significant digits and exponent ("-1234e-2" for
// -12.340), so that two numbers are equal exactly when their canonical forms are: no float
// rounding, and no big-number arithmetic a hostile exponent could make expensive.
func canonical(n string) string {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	mant, expPart, _ := strings.Cut(strings.ToLower(n), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0" // -0 and 0.000e5 are zero
	}
	exp := int64(-len(frac))
	if expPart != "" {
		e, err := strconv.ParseInt(expPart, 10, 64)
		if err != nil || e > 1<<40 || e < -(1<<40) {
			return n // an exponent beyond any float: compared as written
		}
		exp += e
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + strconv.FormatInt(exp, 10)
}
