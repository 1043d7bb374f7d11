package symbols

import (
	"go/constant"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

var constantType = reflect.TypeFor[constant.Value]()

// checkShared reports why sym, a value every interpreter shares, would let guest code reach host
// state: an addressable (assignable) variable, or a map, slice, array or pointer it could write
// through. "" when sym is safe to share.
func checkShared(sym reflect.Value) string {
	if sym.CanAddr() || sym.CanSet() {
		return "exported by address: guest code can assign the host's variable"
	}
	if sym.Type().Implements(constantType) && sym.Kind() != reflect.Interface {
		return "" // a constant: yaegi reads its value at compile time
	}
	switch sym.Kind() {
	case reflect.Func:
		return ""
	case reflect.Pointer:
		if sym.IsNil() {
			return "" // a type: (*T)(nil)
		}
		return "a non-nil pointer: guest code can write through it"
	case reflect.Interface:
		return immutable(sym.Elem(), "")
	}
	return immutable(sym, "")
}

// immutable reports why a value, held by value (not addressable), could still be written by
// guest code: a map, slice or array it can index, a pointer to an exported type it can assign
// through (*p = x) or with exported fields, and so on, recursively.
func immutable(v reflect.Value, path string) string {
	if !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String, reflect.Func:
		return ""
	case reflect.Struct:
		for i := range v.NumField() {
			if why := immutable(v.Field(i), path+"."+v.Type().Field(i).Name); why != "" {
				return why
			}
		}
		return ""
	case reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return immutable(v.Elem(), path)
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		el := v.Type().Elem()
		if el.Kind() != reflect.Struct || el.Name() == "" || el.PkgPath() == "" || isExported(el.Name()) {
			return path + ": points to " + el.String() + ", which guest code can name and assign through"
		}
		for i := range el.NumField() {
			if el.Field(i).IsExported() {
				return path + ": points to " + el.String() + " with exported field " + el.Field(i).Name
			}
		}
		return immutable(v.Elem(), path+"*")
	}
	return path + ": a shared " + v.Kind().String()
}

func isExported(name string) bool { return name != "" && strings.ToUpper(name[:1]) == name[:1] }

// TestNoHostStateShared walks every symbol of every allowed package, as interpreters get it, and
// proves none is host state guest code could write: the io.EOF = nil, unicode.Categories and
// *base64.StdEncoding attacks of issue 8 all went through such symbols.
func TestNoHostStateShared(t *testing.T) {
	for path := range Allowed {
		key := path + "/" + path[strings.LastIndex(path, "/")+1:]
		syms, ok := Symbols[key]
		if !ok {
			t.Errorf("%s: allowed but no symbol table", path)
			continue
		}
		if len(syms) == 0 {
			t.Errorf("%s: empty symbol table", path)
		}
		for name, sym := range syms {
			if why := checkShared(sym); why != "" {
				t.Errorf("%s.%s: %s", path, name, why)
			}
		}
		for name := range Copies[key] {
			if _, ok := syms[name]; ok {
				t.Errorf("%s.%s: both shared and copied", path, name)
			}
		}
	}
	for key := range Copies {
		if _, ok := Symbols[key]; !ok {
			t.Errorf("copies for %s, which has no symbol table", key)
		}
	}
}

// TestCheckSharedCatchesAddressableVariables is the check above against the tables as they were
// before issue 8 (variables by address, shared tables), so it cannot pass by accident.
func TestCheckSharedCatchesAddressableVariables(t *testing.T) {
	for name, sym := range map[string]reflect.Value{
		"io.EOF by address":             reflect.ValueOf(&io.EOF).Elem(),
		"unicode.Categories by address": reflect.ValueOf(&unicode.Categories).Elem(),
		"unicode.Categories by value":   reflect.ValueOf(unicode.Categories),
		"unicode.Upper by value":        reflect.ValueOf(unicode.Upper),
		"unicode.CaseRanges by value":   reflect.ValueOf(unicode.CaseRanges),
	} {
		if checkShared(sym) == "" {
			t.Errorf("%s: not caught", name)
		}
	}
	for name, sym := range map[string]reflect.Value{
		"io.EOF by value":     reflect.ValueOf([1]error{io.EOF}).Index(0),
		"io.Discard by value": reflect.ValueOf([1]io.Writer{io.Discard}).Index(0),
		"a function":          reflect.ValueOf(io.ReadFull),
		"a type":              reflect.ValueOf((*io.Reader)(nil)),
		"a constant":          reflect.ValueOf(constant.MakeFromLiteral("1", 5, 0)),
	} {
		if why := checkShared(sym); why != "" {
			t.Errorf("%s: refused: %s", name, why)
		}
	}
}

// refs collects the addresses of every pointer, map and slice backing array reachable from v,
// unexported fields included.
func refs(v reflect.Value, seen map[uintptr]string, path string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		if v.IsNil() {
			return
		}
		if _, ok := seen[v.Pointer()]; ok {
			return
		}
		seen[v.Pointer()] = path
		if v.Kind() == reflect.Pointer {
			refs(v.Elem(), seen, path+"*")
			return
		}
		it := v.MapRange()
		for it.Next() {
			refs(it.Key(), seen, path+"[key]")
			refs(it.Value(), seen, path+"["+it.Key().String()+"]")
		}
	case reflect.Slice:
		if v.IsNil() || v.Len() == 0 {
			return
		}
		seen[v.Pointer()] = path
		for i := range v.Len() {
			refs(v.Index(i), seen, path+"[i]")
		}
	case reflect.Array:
		for i := range v.Len() {
			refs(v.Index(i), seen, path+"[i]")
		}
	case reflect.Struct:
		for i := range v.NumField() {
			refs(v.Field(i), seen, path+"."+v.Type().Field(i).Name)
		}
	case reflect.Interface:
		if !v.IsNil() {
			refs(v.Elem(), seen, path)
		}
	}
}

// TestCopiesShareNothing proves each copied variable is equal to the host's and shares no
// pointer, map or slice with it (nor with another interpreter's copy).
func TestCopiesShareNothing(t *testing.T) {
	n := 0
	for key, vars := range Copies {
		for name, p := range vars {
			n++
			host := reflect.ValueOf(p).Elem()
			a, b := NewCopier().Var(p), NewCopier().Var(p)
			if !a.CanSet() {
				t.Errorf("%s.%s: the copy is not the interpreter's own variable", key, name)
			}
			if !reflect.DeepEqual(host.Interface(), a.Interface()) {
				t.Errorf("%s.%s: the copy differs from the host's value", key, name)
			}
			hostRefs, aRefs, bRefs := map[uintptr]string{}, map[uintptr]string{}, map[uintptr]string{}
			refs(host, hostRefs, name)
			refs(a, aRefs, name)
			refs(b, bRefs, name)
			for addr, path := range aRefs {
				if _, ok := hostRefs[addr]; ok {
					t.Errorf("%s.%s: the copy shares %s with the host", key, name, path)
				}
				if _, ok := bRefs[addr]; ok {
					t.Errorf("%s.%s: two interpreters' copies share %s", key, name, path)
				}
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d copied variables: the unicode tables alone are ~250", n)
	}
}

// TestCopierKeepsSharingWithinAnInterpreter: one interpreter's copies of unicode.Categories and
// unicode.Lu are the same table, as on the host.
func TestCopierKeepsSharingWithinAnInterpreter(t *testing.T) {
	c := NewCopier()
	cats := c.Var(&unicode.Categories).Interface().(map[string]*unicode.RangeTable)
	lu := c.Var(&unicode.Lu).Interface().(*unicode.RangeTable)
	if cats["Lu"] != lu {
		t.Error("Categories[\"Lu\"] and Lu are different copies in one interpreter")
	}
	if lu == unicode.Lu {
		t.Error("Lu was not copied")
	}
}
