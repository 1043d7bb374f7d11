package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// UnmarshalArg decodes one JSON argument into v (a pointer) as encoding/json does, with one
// difference every backend must share: a JSON number that lands in an empty interface (an any
// parameter, or an any element, map value or struct field at any depth, including the []any and
// map[string]any that JSON arrays and objects become inside an any) takes the type Go gives the
// same literal written as an untyped constant: int when it has no fraction or exponent and fits in
// int, float64 otherwise. So AnyInt(x, y, z any) called with [2, 3, 1] sees ints, [3.0, 4, 7] sees
// a float64 3, and [1e2] sees float64 100. encoding/json alone would give float64 everywhere.
// Numbers decoded into typed targets (int, float64, ...) are unaffected.
//
// data is cut to its length first (data[:len:len]): encoding/json hands UnmarshalJSON methods
// subslices of it, and capacity past the argument (the next argument, or what an earlier caller
// left in a reused buffer) must not be readable by the code.
func UnmarshalArg(data []byte, v any) error {
	data = data[:len(data):len(data)]
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !hasInterface(rv.Type().Elem()) {
		return json.Unmarshal(data, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		// json.Unmarshal's own error for trailing data (a Decoder would ignore it).
		return json.Unmarshal(data, new(any))
	}
	return fixNumbers(rv.Elem())
}

// NumberValue is the value UnmarshalArg gives JSON number n inside an empty interface: int for an
// integer literal that fits in int, float64 otherwise (Go's default type for the same constant).
func NumberValue(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(i), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, &json.UnmarshalTypeError{Value: "number " + s, Type: reflect.TypeFor[float64]()}
	}
	return f, nil
}

// fixNumbers replaces the json.Numbers UseNumber left in v's empty interfaces by NumberValue.
func fixNumbers(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() || v.NumMethod() != 0 || !v.CanSet() {
			return nil
		}
		x, err := fixAny(v.Interface())
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(x))
	case reflect.Pointer:
		if !v.IsNil() && hasInterface(v.Type().Elem()) {
			return fixNumbers(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() && hasInterface(f.Type()) {
				if err := fixNumbers(f); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if !hasInterface(v.Type().Elem()) {
			return nil
		}
		for i := range v.Len() {
			if err := fixNumbers(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.IsNil() || !hasInterface(v.Type().Elem()) {
			return nil
		}
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			if err := fixNumbers(e); err != nil {
				return err
			}
			v.SetMapIndex(it.Key(), e)
		}
	}
	return nil
}

// fixAny rewrites the values encoding/json produces inside an interface (json.Number, []any,
// map[string]any, scalars), in place where it can.
func fixAny(x any) (any, error) {
	switch t := x.(type) {
	case json.Number:
		return NumberValue(t)
	case []any:
		for i, e := range t {
			f, err := fixAny(e)
			if err != nil {
				return nil, err
			}
			t[i] = f
		}
	case map[string]any:
		for k, e := range t {
			f, err := fixAny(e)
			if err != nil {
				return nil, err
			}
			t[k] = f
		}
	}
	return x, nil
}

var interfaceTypes sync.Map // reflect.Type -> bool

// hasInterface reports whether a value of type t can hold an empty interface that JSON decodes
// into, so that types without one skip the UseNumber pass entirely.
func hasInterface(t reflect.Type) bool {
	if b, ok := interfaceTypes.Load(t); ok {
		return b.(bool)
	}
	b := hasInterfaceSeen(t, map[reflect.Type]bool{})
	interfaceTypes.Store(t, b)
	return b
}

func hasInterfaceSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return hasInterfaceSeen(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && hasInterfaceSeen(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
