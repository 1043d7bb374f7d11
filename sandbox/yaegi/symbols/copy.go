package symbols

import "reflect"

// Copies maps "import/path/name" to the package's mutable variables (unicode tables, encodings,
// crc32 tables, time.UTC), each as a pointer to the host's variable. These pointers are never
// handed to an interpreter: they are not in Symbols, which every interpreter shares, and an
// interpreter gets its own deep copy (Copier.Var) of only the variables its program references
// (see gen/main.go, noHostState).
var Copies = map[string]map[string]any{}

// Copier deep-copies host variables for one interpreter. Pointers, maps and slices reached from
// several variables are copied once, so the copies keep the originals' sharing among themselves
// (unicode.Categories["Lu"] is the same table as unicode.Lu) but share nothing with the host.
type Copier struct {
	memo map[copyKey]reflect.Value
}

type copyKey struct {
	ptr uintptr
	n   int
	t   reflect.Type
}

// NewCopier returns a Copier for one interpreter.
func NewCopier() *Copier { return &Copier{memo: map[copyKey]reflect.Value{}} }

// Var returns a new variable (addressable: it is the interpreter's own) holding a deep copy of *p.
func (c *Copier) Var(p any) reflect.Value {
	src := reflect.ValueOf(p).Elem()
	dst := reflect.New(src.Type()).Elem()
	dst.Set(c.copy(src))
	return dst
}

// copy deep-copies v. Exported struct fields are copied deeply; unexported ones by value (they
// cannot be set through reflect): the symbols test proves no copied variable keeps a reference
// shared with the host that way.
func (c *Copier) copy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		k := copyKey{v.Pointer(), -1, v.Type()}
		if m, ok := c.memo[k]; ok {
			return m
		}
		n := reflect.New(v.Type().Elem())
		c.memo[k] = n
		n.Elem().Set(c.copy(v.Elem()))
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		k := copyKey{v.Pointer(), -1, v.Type()}
		if m, ok := c.memo[k]; ok {
			return m
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		c.memo[k] = n
		it := v.MapRange()
		for it.Next() {
			n.SetMapIndex(c.copy(it.Key()), c.copy(it.Value()))
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		k := copyKey{v.Pointer(), v.Len(), v.Type()}
		if m, ok := c.memo[k]; ok {
			return m
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		c.memo[k] = n
		if valueOnly(v.Type().Elem()) {
			reflect.Copy(n, v) // the unicode tables' Range16/Range32 slices: one copy
			return n
		}
		for i := range v.Len() {
			n.Index(i).Set(c.copy(v.Index(i)))
		}
		return n
	case reflect.Array:
		n := reflect.New(v.Type()).Elem()
		if valueOnly(v.Type().Elem()) {
			n.Set(v)
			return n
		}
		for i := range v.Len() {
			n.Index(i).Set(c.copy(v.Index(i)))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if n.Field(i).CanSet() {
				n.Field(i).Set(c.copy(v.Field(i)))
			}
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(c.copy(v.Elem()))
		return n
	}
	return v
}

// valueOnly reports whether values of type t hold no pointer, map, slice, interface, channel or
// function, so that a plain copy shares nothing.
func valueOnly(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return valueOnly(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !valueOnly(t.Field(i).Type) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Chan, reflect.Func,
		reflect.UnsafePointer, reflect.String:
		return t.Kind() == reflect.String // strings are immutable: sharing one is safe
	}
	return true
}
