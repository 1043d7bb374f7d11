// Package guestgen generates the Go that backends which build an artifact with the machine's Go
// toolchain (sandbox/wasm, sandbox/native) wrap around it: the normalized artifact, the
// dispatcher that decodes framed JSON args and encodes the tagged result, and forge/host's API;
// it also serves the guest's host requests (ServeHostOp), finds the toolchain, turns go build
// output into errors and keeps the build cache's records. One generator for every such backend,
// so they answer byte for byte alike.
package guestgen

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// NormalizePackage returns code with its package clause set to package artifact (a missing clause
// is added on the first line, so line numbers do not move).
func NormalizePackage(code string) (string, *ast.File, *token.FileSet, error) {
	fset := token.NewFileSet()
	f, parsed, err := sandbox.ParseFile(fset, code)
	if err != nil {
		return "", nil, nil, err
	}
	if f.Name.Name == sandbox.PackageName {
		return parsed, f, fset, nil
	}
	start := fset.Position(f.Name.Pos()).Offset
	end := fset.Position(f.Name.End()).Offset
	fset = token.NewFileSet()
	f, parsed, err = sandbox.ParseFile(fset, parsed[:start]+sandbox.PackageName+parsed[end:])
	if err != nil {
		return "", nil, nil, err
	}
	return parsed, f, fset, nil
}

// DispatcherSource generates artifact.Forge__Call for sig: it lives in package artifact so that
// parameter types declared in the file (exported or not) need no qualification. Args arrive framed
// (per parameter a little-endian uint32 length, then the JSON; length 0 means absent).
func DispatcherSource(sig sandbox.Signature) string {
	var b strings.Builder
	b.WriteString(`package artifact

import (
	forge__json "encoding/json"
	forge__args "forge/argdecode"
	forge__fmt "fmt"
	forge__runtime "runtime"
	forge__strconv "strconv"
	forge__strings "strings"
	forge__utf8 "unicode/utf8"
)

// UnmarshalArg is unused by functions without parameters.
var _ = forge__args.UnmarshalArg

type forge__error struct {
	Kind    string ` + "`json:\"kind\"`" + `
	Message string ` + "`json:\"message\"`" + `
	Hint    string ` + "`json:\"hint,omitempty\"`" + `
	Param   string ` + "`json:\"param,omitempty\"`" + `
	Line    int    ` + "`json:\"line,omitempty\"`" + `
}

func forge__fail(e forge__error) []byte {
	e.Message = forge__cap(e.Message)
	out, _ := forge__json.Marshal(e)
	return append([]byte{'e'}, out...)
}

func forge__ok(v any) []byte {
	switch x := v.(type) {
	case int:
		return forge__strconv.AppendInt([]byte{'v'}, int64(x), 10)
	case int64:
		return forge__strconv.AppendInt([]byte{'v'}, x, 10)
	case int32:
		return forge__strconv.AppendInt([]byte{'v'}, int64(x), 10)
	case bool:
		return forge__strconv.AppendBool([]byte{'v'}, x)
	case string:
		if forge__plain(x) {
			out := make([]byte, 0, len(x)+3)
			out = append(out, 'v', '"')
			out = append(out, x...)
			return append(out, '"')
		}
	}
	out, err := forge__json.Marshal(v)
	if err != nil {
		return forge__fail(forge__error{Kind: "result", Message: forge__fmt.Sprintf("encode ` + sig.Result + ` result: %v", err),
			Hint: "return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers)"})
	}
	return append([]byte{'v'}, out...)
}

// forge__cap bounds an error or panic text as sandbox.CapMessage does, before it is encoded, so
// the host never parses more than about sandbox.MaxErrorBytes of it.
func forge__cap(s string) string {
	const max = ` + strconv.Itoa(sandbox.MaxErrorBytes) + `
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > max-4 && !forge__utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + forge__fmt.Sprintf(` + "`" + sandbox.CapMarker + "`" + `, len(s)-cut)
}

// forge__panicLine finds the artifact line a recovered panic came from.
func forge__panicLine() int {
	pcs := make([]uintptr, 32)
	n := forge__runtime.Callers(3, pcs)
	frames := forge__runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if forge__strings.HasSuffix(f.File, "/artifact/artifact.go") {
			return f.Line
		}
		if !more {
			return 0
		}
	}
}

// forge__plain reports whether s needs no JSON escaping (printable ASCII without " \\ < > &).
func forge__plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// forge__int parses a plain JSON integer; anything else goes through encoding/json.
func forge__int(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || (raw[0] == '0' && len(raw) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// forge__str reads a JSON string without escapes; anything else goes through encoding/json.
func forge__str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(s), true
}

func forge__arg(in []byte) (arg, rest []byte) {
	if len(in) < 4 {
		return nil, nil
	}
	n := int(in[0]) | int(in[1])<<8 | int(in[2])<<16 | int(in[3])<<24
	return in[4 : 4+n : 4+n], in[4+n:] // no capacity past the argument's end
}

func Forge__Call(in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out = forge__fail(forge__error{Kind: "panic", Message: forge__fmt.Sprint("panic: ", r), Line: forge__panicLine()})
		}
	}()
	var raw []byte
`)
	args := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		fmt.Fprintf(&b, "\tvar a%d %s\n\traw, in = forge__arg(in)\n", i, p.Type)
		switch p.Type {
		case "int", "int64":
			fmt.Fprintf(&b, "\tif v, ok := forge__int(raw); ok {\n\t\ta%d, raw = %s(v), nil\n\t}\n", i, p.Type)
		case "string":
			fmt.Fprintf(&b, "\tif v, ok := forge__str(raw); ok {\n\t\ta%d, raw = v, nil\n\t}\n", i)
		case "bool":
			fmt.Fprintf(&b, "\tif s := string(raw); s == \"true\" || s == \"false\" {\n\t\ta%d, raw = s == \"true\", nil\n\t}\n", i)
		}
		fmt.Fprintf(&b, "\tif len(raw) > 0 {\n\t\tif err := forge__args.UnmarshalArg(raw, &a%d); err != nil {\n", i)
		fmt.Fprintf(&b, "\t\t\treturn forge__fail(forge__error{Kind: \"args\", Param: %s, Message: %s + err.Error()})\n\t\t}\n\t}\n",
			strconv.Quote(p.Name), strconv.Quote("want "+p.Type+": "))
		args[i] = fmt.Sprintf("a%d", i)
	}
	b.WriteString("\t_ = raw\n")
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	switch sig.Shape {
	case sandbox.ResultNone:
		fmt.Fprintf(&b, "\t%s\n\treturn forge__ok(nil)\n", call)
	case sandbox.ResultValue:
		fmt.Fprintf(&b, "\treturn forge__ok(%s)\n", call)
	case sandbox.ResultError:
		fmt.Fprintf(&b, "\tif err := %s; err != nil {\n\t\treturn forge__fail(forge__error{Kind: \"returned\", Message: err.Error()})\n\t}\n\treturn forge__ok(nil)\n", call)
	case sandbox.ResultValueError:
		fmt.Fprintf(&b, "\tr, err := %s\n\tif err != nil {\n\t\treturn forge__fail(forge__error{Kind: \"returned\", Message: err.Error()})\n\t}\n\treturn forge__ok(r)\n", call)
	}
	b.WriteString("}\n")
	return b.String()
}

// ModuleKey is the content hash that names a guest module's build in a cache: prefix (the guest
// generator's version, the toolchain's, anything else the build depends on) and every file.
func ModuleKey(prefix string, files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString(prefix)
	for _, p := range paths {
		fmt.Fprintf(&b, "%s\x00%d\x00%s\x00", p, len(files[p]), files[p])
	}
	return sandbox.Source{Code: b.String()}.Checksum()
}
