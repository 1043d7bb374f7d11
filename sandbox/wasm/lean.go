package wasm

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// leanSource is package forge/lean of a lean guest (see internal/lean and leanDispatcherSource).
//
//go:embed internal/lean/lean.go
var leanSource string

// leanType is a type the lean dispatcher decodes (parameters) or encodes (results) itself: int,
// int64, float64, string, bool, slices and string-keyed maps of them, and, as a result, an array
// of them.
type leanType struct {
	kind string // "int", "int64", "float64", "string", "bool", "slice", "array", "map"
	elem *leanType
	n    int // array length
}

// parseLeanType parses the Go type text typ; ok is false for any type the lean codec does not
// cover (named types, structs, pointers, interfaces, other basic types, arrays as parameters).
func parseLeanType(typ string, result bool) (*leanType, bool) {
	e, err := parser.ParseExpr(typ)
	if err != nil {
		return nil, false
	}
	return leanTypeOf(e, result, 0)
}

func leanTypeOf(e ast.Expr, result bool, depth int) (*leanType, bool) {
	if depth > 8 {
		return nil, false
	}
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "int", "int64", "float64", "string", "bool":
			return &leanType{kind: t.Name}, true
		}
	case *ast.ArrayType:
		elem, ok := leanTypeOf(t.Elt, result, depth+1)
		if !ok {
			return nil, false
		}
		if t.Len == nil {
			return &leanType{kind: "slice", elem: elem}, true
		}
		lit, isLit := t.Len.(*ast.BasicLit)
		if !result || depth > 0 || !isLit || lit.Kind != token.INT || elem.kind == "array" {
			return nil, false
		}
		n, err := strconv.Atoi(lit.Value)
		if err != nil || n > 1<<16 {
			return nil, false
		}
		return &leanType{kind: "array", elem: elem, n: n}, true
	case *ast.MapType:
		key, ok := t.Key.(*ast.Ident)
		if !ok || key.Name != "string" {
			return nil, false
		}
		elem, ok := leanTypeOf(t.Value, result, depth+1)
		if !ok {
			return nil, false
		}
		return &leanType{kind: "map", elem: elem}, true
	}
	return nil, false
}

// decoder is the forge/lean expression that decodes t.
func (t *leanType) decoder() string {
	switch t.kind {
	case "int", "int64":
		return "forge__lean.Int[" + t.kind + "]"
	case "float64":
		return "forge__lean.Float"
	case "string":
		return "forge__lean.String"
	case "bool":
		return "forge__lean.Bool"
	case "slice":
		return "forge__lean.Slice(" + t.elem.decoder() + ")"
	case "map":
		return "forge__lean.Map(" + t.elem.decoder() + ")"
	}
	panic("wasm: no lean decoder for " + t.kind)
}

// encoder is the forge/lean expression that encodes t (an array as a slice of it).
func (t *leanType) encoder() string {
	switch t.kind {
	case "int", "int64":
		return "forge__lean.AppendInt[" + t.kind + "]"
	case "float64":
		return "forge__lean.AppendFloat"
	case "string":
		return "forge__lean.AppendString"
	case "bool":
		return "forge__lean.AppendBool"
	case "slice":
		return "forge__lean.EncSlice(" + t.elem.encoder() + ")"
	case "array":
		return "forge__lean.EncArray(" + t.elem.encoder() + ")"
	case "map":
		return "forge__lean.EncMap(" + t.elem.encoder() + ")"
	}
	panic("wasm: no lean encoder for " + t.kind)
}

// reflectType is t as a reflect.Type (parameters only), for the host's decoding of a rejected
// argument.
func (t *leanType) reflectType() reflect.Type {
	switch t.kind {
	case "int":
		return reflect.TypeFor[int]()
	case "int64":
		return reflect.TypeFor[int64]()
	case "float64":
		return reflect.TypeFor[float64]()
	case "string":
		return reflect.TypeFor[string]()
	case "bool":
		return reflect.TypeFor[bool]()
	case "slice":
		return reflect.SliceOf(t.elem.reflectType())
	case "map":
		return reflect.MapOf(reflect.TypeFor[string](), t.elem.reflectType())
	}
	panic("wasm: no reflect type for " + t.kind)
}

// leanSignature reports whether every parameter and the result of sig are lean types.
func leanSignature(sig sandbox.Signature) bool {
	for _, p := range sig.Params {
		if _, ok := parseLeanType(p.Type, false); !ok {
			return false
		}
	}
	if sig.Shape == sandbox.ResultValue || sig.Shape == sandbox.ResultValueError {
		if _, ok := parseLeanType(sig.Result, true); !ok {
			return false
		}
	}
	return true
}

// panicNeedsFmt reports whether the dispatcher must format panic values with fmt: the code calls
// panic itself (its values can be of any type, which only fmt prints as fmt does) or links fmt
// anyway (it imports fmt or forge/host, whose shim uses fmt).
func panicNeedsFmt(code string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "artifact.go", code, parser.SkipObjectResolution)
	if err != nil {
		return true
	}
	for _, is := range f.Imports {
		if p, _ := strconv.Unquote(is.Path.Value); p == "fmt" || p == "forge/host" {
			return true
		}
	}
	calls := false
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
				calls = true
			}
		}
		return !calls
	})
	return calls
}

// leanDispatcherSource is artifact.Forge__Call for a lean signature: arguments decoded and the
// result encoded by forge/lean, a rejected argument handed back to the host (see leanArgs).
func leanDispatcherSource(sig sandbox.Signature, useFmt bool) string {
	var b strings.Builder
	b.WriteString("package artifact\n\nimport (\n")
	if useFmt {
		b.WriteString("\tforge__fmt \"fmt\"\n")
	}
	b.WriteString("\tforge__lean \"forge/lean\"\n\tforge__runtime \"runtime\"\n)\n\n")
	for i, p := range sig.Params {
		t, _ := parseLeanType(p.Type, false)
		fmt.Fprintf(&b, "var forge__dec%d = %s\n", i, t.decoder())
	}
	var res *leanType
	if sig.Shape == sandbox.ResultValue || sig.Shape == sandbox.ResultValueError {
		res, _ = parseLeanType(sig.Result, true)
		fmt.Fprintf(&b, "var forge__enc = %s\n", res.encoder())
	}
	b.WriteString(`
// forge__panicLine finds the artifact line a recovered panic came from.
func forge__panicLine() int {
	pcs := make([]uintptr, 32)
	n := forge__runtime.Callers(3, pcs)
	frames := forge__runtime.CallersFrames(pcs[:n])
	const suffix = "/artifact/artifact.go"
	for {
		f, more := frames.Next()
		if len(f.File) >= len(suffix) && f.File[len(f.File)-len(suffix):] == suffix {
			return f.Line
		}
		if !more {
			return 0
		}
	}
}

func Forge__Call(in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
`)
	if useFmt {
		b.WriteString("\t\t\tout = forge__lean.Fail(\"panic\", forge__fmt.Sprint(\"panic: \", r), \"\", \"\", forge__panicLine())\n")
	} else {
		b.WriteString("\t\t\tout = forge__lean.Fail(\"panic\", forge__lean.PanicText(r), \"\", \"\", forge__panicLine())\n")
	}
	b.WriteString("\t\t}\n\t}()\n\tvar raw []byte\n\t_ = raw\n")
	args := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		fmt.Fprintf(&b, "\tvar a%d %s\n\traw, in = forge__lean.Arg(in)\n", i, p.Type)
		fmt.Fprintf(&b, "\tif len(raw) > 0 {\n\t\tv, ok := forge__lean.Decode(raw, forge__dec%d)\n\t\tif !ok {\n\t\t\treturn forge__lean.Reject(%d)\n\t\t}\n\t\ta%d = v\n\t}\n", i, i, i)
		args[i] = fmt.Sprintf("a%d", i)
	}
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	ok := "\treturn forge__lean.Ok(r, forge__enc, " + strconv.Quote(sig.Result) + ")\n"
	if res != nil && res.kind == "array" {
		ok = "\treturn forge__lean.Ok(r[:], forge__enc, " + strconv.Quote(sig.Result) + ")\n"
	}
	switch sig.Shape {
	case sandbox.ResultNone:
		fmt.Fprintf(&b, "\t%s\n\treturn forge__lean.Null()\n", call)
	case sandbox.ResultValue:
		fmt.Fprintf(&b, "\tr := %s\n%s", call, ok)
	case sandbox.ResultError:
		fmt.Fprintf(&b, "\tif err := %s; err != nil {\n\t\treturn forge__lean.Fail(\"returned\", err.Error(), \"\", \"\", 0)\n\t}\n\treturn forge__lean.Null()\n", call)
	case sandbox.ResultValueError:
		fmt.Fprintf(&b, "\tr, err := %s\n\tif err != nil {\n\t\treturn forge__lean.Fail(\"returned\", err.Error(), \"\", \"\", 0)\n\t}\n%s", call, ok)
	}
	b.WriteString("}\n")
	return b.String()
}

// argsRejected is what a call returns when a lean guest handed argument i back (result tag 'a').
type argsRejected int

func (a argsRejected) Error() string {
	return fmt.Sprintf("wasm: the guest handed argument %d back to the host", int(a))
}

// leanArgs decodes the arguments from the one the guest rejected onwards with sandbox.UnmarshalArg,
// the decoder the guest would otherwise have linked: the first that does not decode is the call's
// KindArgs error, word for word what the guest's encoding/json said before; the others are
// re-encoded by json.Marshal, a form forge/lean always decodes, for the call's second attempt.
// Only arguments the lean decoder is not sure of get here (syntax and type errors, surrogate
// escapes, invalid UTF-8): a well-formed call never does.
func leanArgs(sig sandbox.Signature, args []json.RawMessage, from int) ([]json.RawMessage, error) {
	if from < 0 || from >= len(args) || len(args) != len(sig.Params) {
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: the guest rejected argument %d of %d", from, len(args))
	}
	out := append([]json.RawMessage(nil), args...)
	for i := from; i < len(args); i++ {
		p := sig.Params[i]
		if len(args[i]) == 0 {
			continue
		}
		t, ok := parseLeanType(p.Type, false)
		if !ok {
			return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: a lean guest with parameter type %s", p.Type)
		}
		v := reflect.New(t.reflectType())
		if err := sandbox.UnmarshalArg(args[i], v.Interface()); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Param: p.Name, Message: sandbox.CapMessage("want " + p.Type + ": " + err.Error())}
		}
		canon, err := json.Marshal(v.Elem().Interface())
		if err != nil {
			return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: re-encode argument %s: %v", p.Name, err)
		}
		out[i] = canon
	}
	return out, nil
}

// callLean is inst.call with the host's side of a lean guest's argument decoding: a rejected
// argument is decoded here and the call made once more with the arguments re-encoded.
func (p *Program) callLean(ctx context.Context, inst *instance, host *sandbox.Host, args []json.RawMessage, lim sandbox.Limits) (json.RawMessage, error) {
	value, err := inst.call(ctx, host, args, lim)
	rej, ok := err.(argsRejected)
	if !ok {
		return value, err
	}
	if args, err = leanArgs(p.sig, args, int(rej)); err != nil {
		return nil, err
	}
	value, err = inst.call(ctx, host, args, lim)
	if rej, ok := err.(argsRejected); ok {
		inst.broken = true
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: the guest rejected argument %d re-encoded by json.Marshal (a forge bug)", int(rej))
	}
	return value, err
}
