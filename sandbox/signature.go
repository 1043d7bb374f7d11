package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// PackageName is the package every artifact is normalized to.
const PackageName = "artifact"

// ExportedName maps a method name onto the Go function that implements it: snake_case becomes
// CamelCase (has_close_elements -> HasCloseElements), a Go name gets its first letter upper-cased.
func ExportedName(method string) string {
	parts := strings.FieldsFunc(method, func(r rune) bool { return r == '_' || r == '-' || r == ' ' || r == '.' })
	var b strings.Builder
	for _, p := range parts {
		r := []rune(p)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// CompileError turns a go/parser or interpreter error ("file.go:LINE:COL: msg") into a KindCompile
// *Error pointing at its line.
func CompileError(err error) *Error {
	e := &Error{Kind: KindCompile, Message: err.Error(), Err: err}
	e.Line = lineOf(err.Error())
	return e
}

// lineOf finds the first "name.go:LINE:" or leading "LINE:COL:" position in msg.
func lineOf(msg string) int {
	if i := strings.Index(msg, ".go:"); i >= 0 {
		msg = msg[i+4:]
	}
	j := 0
	for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
		j++
	}
	if j == 0 || j >= len(msg) || msg[j] != ':' {
		return 0
	}
	n, _ := strconv.Atoi(msg[:j])
	return n
}

// ParseSignature finds src's function (src.Func, or the only exported function) with go/ast and
// derives its signature and parameter schema. It needs no backend.
func ParseSignature(src Source) (Signature, error) {
	fset := token.NewFileSet()
	f, _, err := ParseFile(fset, src.Code)
	if err != nil {
		return Signature{}, err
	}
	fd, err := FindFunc(f, src.Func)
	if err != nil {
		return Signature{}, err
	}
	return signatureOf(fset, f, fd)
}

// FindFunc returns the top-level function named by method (see ExportedName), or the file's only
// exported function when method is empty.
func FindFunc(f *ast.File, method string) (*ast.FuncDecl, error) {
	var exported []*ast.FuncDecl
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !fd.Name.IsExported() || fd.Body == nil {
			continue
		}
		if IsTestFunc(fd) {
			continue
		}
		exported = append(exported, fd)
	}
	names := make([]string, len(exported))
	for i, fd := range exported {
		names[i] = fd.Name.Name
	}
	if method == "" {
		if len(exported) == 1 {
			return exported[0], nil
		}
		return nil, &Error{Kind: KindCompile, Message: fmt.Sprintf("want exactly one exported function, found %d (%s)", len(exported), strings.Join(names, ", ")),
			Hint: "export only the method's function, or name it explicitly"}
	}
	want := method
	if strings.ContainsAny(method, "_-. ") || !ast.IsExported(method) {
		want = ExportedName(method)
	}
	for _, fd := range exported {
		if fd.Name.Name == want {
			return fd, nil
		}
	}
	return nil, &Error{Kind: KindCompile, Message: fmt.Sprintf("no exported function %s (method %q); exported: %s", want, method, strings.Join(names, ", ")),
		Hint: fmt.Sprintf("declare func %s(...) at top level of package %s", want, PackageName)}
}

// IsTestFunc reports whether fd has a test function's shape, func TestXxx(t *testing.T); every
// backend and the gate use it to tell acceptance tests from the artifact's function.
func IsTestFunc(fd *ast.FuncDecl) bool {
	if fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
		return false
	}
	if fd.Type.Params == nil || len(fd.Type.Params.List) != 1 || len(fd.Type.Params.List[0].Names) > 1 {
		return false
	}
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// TestNames lists the test functions of a test file, in file order.
func TestNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && IsTestFunc(fd) {
			names = append(names, fd.Name.Name)
		}
	}
	return names
}

func signatureOf(fset *token.FileSet, f *ast.File, fd *ast.FuncDecl) (Signature, error) {
	sig := Signature{Func: fd.Name.Name}
	if fd.Type.TypeParams != nil && len(fd.Type.TypeParams.List) > 0 {
		return sig, &Error{Kind: KindCompile, Line: fset.Position(fd.Pos()).Line, Message: fmt.Sprintf("%s is generic", fd.Name.Name),
			Hint: "the method's function must have concrete parameter types; keep generic helpers unexported"}
	}
	types := typeDecls(f)
	props := map[string]any{}
	var frags []map[string]any // the parameters' schemas, in order, for the args check
	var required []string
	for _, field := range fd.Type.Params.List {
		typ := field.Type
		if ell, ok := typ.(*ast.Ellipsis); ok {
			sig.Variadic = true
			typ = &ast.ArrayType{Elt: ell.Elt}
		}
		ts := exprString(fset, typ)
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{{Name: "_"}}
		}
		for _, n := range names {
			name := n.Name
			if name == "_" {
				name = "arg" + strconv.Itoa(len(sig.Params))
			}
			sig.Params = append(sig.Params, Param{Name: name, Type: ts})
			ps := schemaOf(fset, typ, types, map[string]bool{})
			props[name] = ps
			frags = append(frags, ps)
			required = append(required, name)
		}
	}
	var results []ast.Expr
	if fd.Type.Results != nil {
		for _, r := range fd.Type.Results.List {
			n := len(r.Names)
			if n == 0 {
				n = 1
			}
			for range n {
				results = append(results, r.Type)
			}
		}
	}
	isErr := func(e ast.Expr) bool { id, ok := e.(*ast.Ident); return ok && id.Name == "error" }
	switch {
	case len(results) == 0:
		sig.Shape = ResultNone
	case len(results) == 1 && isErr(results[0]):
		sig.Shape = ResultError
	case len(results) == 1:
		sig.Shape, sig.Result = ResultValue, exprString(fset, results[0])
	case len(results) == 2 && isErr(results[1]) && !isErr(results[0]):
		sig.Shape, sig.Result = ResultValueError, exprString(fset, results[0])
	default:
		return sig, &Error{Kind: KindCompile, Line: fset.Position(fd.Pos()).Line, Message: fmt.Sprintf("%s returns %d results", fd.Name.Name, len(results)),
			Hint: "return T, (T, error) or error; wrap several values in a struct"}
	}
	if sig.Shape == ResultValue || sig.Shape == ResultValueError {
		rs, err := json.Marshal(schemaOf(fset, results[0], types, map[string]bool{}))
		if err != nil {
			return sig, &Error{Kind: KindInternal, Message: "encode result schema", Err: err}
		}
		sig.ResultSchema = rs
	}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		if sig.Variadic {
			required = required[:len(required)-1]
		}
		schema["required"] = required
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return sig, &Error{Kind: KindInternal, Message: "encode params schema", Err: err}
	}
	sig.ParamsSchema = raw
	sig.check = newArgCheck(frags)
	return sig, nil
}

func typeDecls(f *ast.File) map[string]ast.Expr {
	m := map[string]ast.Expr{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			m[ts.Name.Name] = ts.Type
		}
	}
	return m
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, e)
	return b.String()
}

// schemaOf maps a Go type expression onto a JSON Schema fragment as encoding/json would see it.
func schemaOf(fset *token.FileSet, e ast.Expr, types map[string]ast.Expr, seen map[string]bool) map[string]any {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr":
			return intSchema(t.Name)
		case "float32":
			// The decoder refuses a number past float32's range; the schema says so.
			return map[string]any{"type": "number", "minimum": -math.MaxFloat32, "maximum": math.MaxFloat32}
		case "float64":
			return map[string]any{"type": "number"}
		case "string":
			return map[string]any{"type": "string"}
		case "bool":
			return map[string]any{"type": "boolean"}
		case "rune":
			return intSchema("int32")
		case "byte":
			return intSchema("uint8")
		case "any", "error":
			return map[string]any{}
		}
		if def, ok := types[t.Name]; ok && !seen[t.Name] {
			seen[t.Name] = true
			defer delete(seen, t.Name)
			return schemaOf(fset, def, types, seen)
		}
		return map[string]any{}
	case *ast.StarExpr:
		inner := schemaOf(fset, t.X, types, seen)
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
	case *ast.ArrayType:
		if id, ok := t.Elt.(*ast.Ident); ok && id.Name == "byte" && t.Len == nil {
			// Like every slice, a []byte decodes null as nil.
			return map[string]any{"type": []string{"string", "null"}, "contentEncoding": "base64"}
		}
		s := map[string]any{"type": "array", "items": schemaOf(fset, t.Elt, types, seen)}
		if t.Len != nil {
			if lit, ok := t.Len.(*ast.BasicLit); ok {
				n, _ := strconv.Atoi(lit.Value)
				s["minItems"], s["maxItems"] = n, n
			}
		} else {
			s["type"] = []string{"array", "null"}
		}
		return s
	case *ast.MapType:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": schemaOf(fset, t.Value, types, seen)}
	case *ast.InterfaceType:
		return map[string]any{}
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok && x.Name == "time" && t.Sel.Name == "Time" {
			return map[string]any{"type": "string", "format": "date-time"}
		}
		if x, ok := t.X.(*ast.Ident); ok && x.Name == "time" && t.Sel.Name == "Duration" {
			return intSchema("int64")
		}
		return map[string]any{}
	case *ast.StructType:
		props := map[string]any{}
		for _, fl := range t.Fields.List {
			tagName := ""
			if fl.Tag != nil {
				tag, _ := strconv.Unquote(fl.Tag.Value)
				js := structTag(tag, "json")
				if js == "-" {
					continue
				}
				tagName, _, _ = strings.Cut(js, ",")
			}
			for _, n := range fl.Names {
				if !n.IsExported() {
					continue
				}
				name := n.Name
				if tagName != "" {
					name = tagName
				}
				props[name] = schemaOf(fset, fl.Type, types, seen)
			}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}

// intSchema is the schema of a Go integer type: "integer" with the type's range, which the
// decoders enforce (a number out of range is the caller's error naming the parameter), so the
// schema MCP publishes says so. int, uint and uintptr have 64 bits in every backend.
func intSchema(name string) map[string]any {
	s := map[string]any{"type": "integer"}
	switch name {
	case "int8":
		s["minimum"], s["maximum"] = math.MinInt8, math.MaxInt8
	case "int16":
		s["minimum"], s["maximum"] = math.MinInt16, math.MaxInt16
	case "int32":
		s["minimum"], s["maximum"] = math.MinInt32, math.MaxInt32
	case "int", "int64":
		s["minimum"], s["maximum"] = int64(math.MinInt64), int64(math.MaxInt64)
	case "uint8":
		s["minimum"], s["maximum"] = 0, math.MaxUint8
	case "uint16":
		s["minimum"], s["maximum"] = 0, math.MaxUint16
	case "uint32":
		s["minimum"], s["maximum"] = 0, uint32(math.MaxUint32)
	case "uint", "uint64", "uintptr":
		s["minimum"], s["maximum"] = 0, uint64(math.MaxUint64)
	}
	return s
}

func structTag(tag, key string) string {
	for tag != "" {
		i := 0
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		tag = tag[i:]
		i = strings.IndexByte(tag, ':')
		if i <= 0 || i+1 >= len(tag) || tag[i+1] != '"' {
			return ""
		}
		name := tag[:i]
		tag = tag[i+1:]
		j := 1
		for j < len(tag) && tag[j] != '"' {
			if tag[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(tag) {
			return ""
		}
		val, err := strconv.Unquote(tag[:j+1])
		tag = tag[j+1:]
		if err == nil && name == key {
			return val
		}
	}
	return ""
}
