package yaegi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/traefik/yaegi/interp"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// The warm call path avoids what costs yaegi most per call (reflect calls into native code, boxed
// values, fresh contexts and timers): when every parameter and the result have types the host can
// build itself (builtin types and slices, arrays, maps and pointers of them), each interpreter gets
// typed native variables behind pointers P0..Pn and R; the host decodes JSON args straight into
// them, the stub is one assignment `*R = F(*P0, *P1)`, and the host encodes *R. Other signatures (types declared in the
// file) decode inside the interpreter.

// hostTypes are the parameter and result types of a host-typed signature.
type hostTypes struct {
	params []reflect.Type
	// result is nil when the function has no value result, or when its type could carry a guest
	// value (see methodFree): that result is encoded inside the guest instead.
	result reflect.Type
}

var basicTypes = map[string]reflect.Type{
	"int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](),
	"int32": reflect.TypeFor[int32](), "int64": reflect.TypeFor[int64](), "uint": reflect.TypeFor[uint](),
	"uint8": reflect.TypeFor[uint8](), "uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](),
	"uint64": reflect.TypeFor[uint64](), "float32": reflect.TypeFor[float32](), "float64": reflect.TypeFor[float64](),
	"string": reflect.TypeFor[string](), "bool": reflect.TypeFor[bool](), "byte": reflect.TypeFor[byte](),
	"rune": reflect.TypeFor[rune](), "any": reflect.TypeFor[any](),
}

// hostType builds the reflect type of a Go type expression, if it uses builtin types only.
func hostType(e ast.Expr, declared map[string]bool) (reflect.Type, bool) {
	switch t := e.(type) {
	case *ast.Ident:
		if declared[t.Name] {
			return nil, false
		}
		rt, ok := basicTypes[t.Name]
		return rt, ok
	case *ast.InterfaceType:
		if len(t.Methods.List) == 0 {
			return reflect.TypeFor[any](), true
		}
	case *ast.StarExpr:
		if el, ok := hostType(t.X, declared); ok {
			return reflect.PointerTo(el), true
		}
	case *ast.ArrayType:
		el, ok := hostType(t.Elt, declared)
		if !ok {
			return nil, false
		}
		if t.Len == nil {
			return reflect.SliceOf(el), true
		}
		if lit, ok := t.Len.(*ast.BasicLit); ok {
			if n, err := strconv.Atoi(lit.Value); err == nil {
				return reflect.ArrayOf(n, el), true
			}
		}
	case *ast.MapType:
		k, ok1 := hostType(t.Key, declared)
		v, ok2 := hostType(t.Value, declared)
		if ok1 && ok2 && k.Comparable() {
			return reflect.MapOf(k, v), true
		}
	}
	return nil, false
}

// hostTypesOf returns the host types of sig, or nil if any type is declared in the file (or is
// not expressible on the host).
func hostTypesOf(sig sandbox.Signature, declared map[string]bool) *hostTypes {
	ht := &hostTypes{}
	for _, p := range sig.Params {
		e, err := parser.ParseExpr(p.Type)
		if err != nil {
			return nil
		}
		rt, ok := hostType(e, declared)
		if !ok {
			return nil
		}
		ht.params = append(ht.params, rt)
	}
	if sig.Shape == sandbox.ResultValue || sig.Shape == sandbox.ResultValueError {
		e, err := parser.ParseExpr(sig.Result)
		if err != nil {
			return nil
		}
		rt, ok := hostType(e, declared)
		if !ok {
			return nil
		}
		if methodFree(rt) {
			ht.result = rt
		}
		// else: the args stay host-typed, the result is encoded in the guest (slot.encode).
	}
	return ht
}

// methodFree reports whether no value of type t can reach a method: t is built by hostType from
// builtin types only, so the one way in for a type the model declared (with its MarshalJSON,
// MarshalText or Error) is an interface (any) somewhere inside. Without one, encoding/json on
// the host only ever sees builtin kinds and calls no guest code.
func methodFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return methodFree(t.Elem())
	case reflect.Map:
		return methodFree(t.Key()) && methodFree(t.Elem())
	}
	return t.NumMethod() == 0
}

// typedVars are one interpreter's native argument and result variables.
type typedVars struct {
	args []reflect.Value // addressable: Elem of a pointer
	ptrs []any           // pointers to the same, for encoding/json
	res  reflect.Value
	// yaegi treats a native variable of a basic type as a constant (no assignment, possible
	// folding), so the interpreter sees pointers: *P0, *R.
	argPtrs []reflect.Value
	resPtr  reflect.Value
}

func newTypedVars(ht *hostTypes) *typedVars {
	tv := &typedVars{}
	for _, t := range ht.params {
		p := reflect.New(t)
		tv.args = append(tv.args, p.Elem())
		tv.ptrs = append(tv.ptrs, p.Interface())
		tv.argPtrs = append(tv.argPtrs, p)
	}
	if ht.result != nil {
		tv.resPtr = reflect.New(ht.result)
		tv.res = tv.resPtr.Elem()
	}
	return tv
}

func (tv *typedVars) exports(m map[string]reflect.Value) {
	for i, p := range tv.argPtrs {
		m["P"+strconv.Itoa(i)] = p
	}
	if tv.resPtr.IsValid() {
		m["R"] = tv.resPtr
	}
}

// bytesString views b as a string without copying, for parsers that do not keep their input.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decodeArg decodes one JSON argument into v (a typed variable), fast for scalars.
func decodeArg(raw json.RawMessage, v reflect.Value, ptr any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytesString(raw) == "null" {
		v.SetZero()
		return nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(bytesString(raw), 10, v.Type().Bits())
		if err == nil {
			v.SetInt(n)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(bytesString(raw), 10, v.Type().Bits())
		if err == nil {
			v.SetUint(n)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		if raw[0] != '"' && raw[0] != 't' && raw[0] != 'f' && raw[0] != '[' && raw[0] != '{' {
			f, err := strconv.ParseFloat(bytesString(raw), v.Type().Bits())
			if err == nil {
				v.SetFloat(f)
				return nil
			}
		}
	case reflect.Bool:
		switch bytesString(raw) {
		case "true":
			v.SetBool(true)
			return nil
		case "false":
			v.SetBool(false)
			return nil
		}
	case reflect.String:
		if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
			v.SetString(string(raw[1 : len(raw)-1]))
			return nil
		}
	case reflect.Interface:
		if c := raw[0]; (c == '-' || c >= '0' && c <= '9') && v.NumMethod() == 0 {
			n, err := sandbox.NumberValue(json.Number(raw))
			if err == nil {
				v.Set(reflect.ValueOf(n))
				return nil
			}
		}
	}
	// Everything else, and the error messages, come from encoding/json (with the sandbox's rule
	// for numbers in interfaces).
	v.SetZero()
	err := sandbox.UnmarshalArg(raw, ptr)
	symbols.ZonesOf(ptr) // times in the guest's zone, not the host's (symbols/tz.go)
	return err
}

// encodeTyped encodes the typed result variable as JSON, fast for integers and booleans.
func encodeTyped(v reflect.Value, maxBytes int) (json.RawMessage, error) {
	var b []byte
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b = strconv.AppendInt(make([]byte, 0, 20), v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b = strconv.AppendUint(make([]byte, 0, 20), v.Uint(), 10)
	case reflect.Bool:
		if v.Bool() {
			b = []byte("true")
		} else {
			b = []byte("false")
		}
	default:
		var err error
		if b, err = json.Marshal(v.Interface()); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindResult, Message: fmt.Sprintf("encode %s result: %v", v.Type(), err), Err: err,
				Hint: "return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers)"}
		}
	}
	if len(b) > maxBytes {
		return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is %d bytes, over the %d-byte cap", len(b), maxBytes)}
	}
	return b, nil
}

// callCtx is a reusable per-interpreter context with a deadline: a fresh context.WithTimeout per
// call costs allocations and a timer. An interpreter whose call hit the deadline is discarded,
// so the done channel only has to serve calls that did not. Its cancellation stops the
// interpreter (stopInterpreter) on the goroutine that cancels: the timer's, the parent's
// AfterFunc's, or the call's own (depth guard).
type callCtx struct {
	parent   context.Context
	timer    *time.Timer
	done     chan struct{}
	mu       sync.Mutex
	err      error
	deadline time.Time
	stop     func() bool // stops watching the parent
	in       *interp.Interpreter
	// halted is set once the interpreter has been stopped (read by the caller after a call).
	halted atomic.Bool
}

func newCallCtx(in *interp.Interpreter) *callCtx {
	c := &callCtx{done: make(chan struct{}), in: in}
	c.timer = time.AfterFunc(time.Hour, func() { c.cancel(context.DeadlineExceeded) })
	c.timer.Stop()
	return c
}

func (c *callCtx) start(parent context.Context, timeout time.Duration) {
	c.parent = parent
	c.deadline = time.Now().Add(timeout)
	if d, ok := parent.Deadline(); ok && d.Before(c.deadline) {
		timeout, c.deadline = time.Until(d), d
	}
	c.timer.Reset(timeout)
	if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	}
}

// finish stops the timer; it reports whether the context is still usable for another call.
func (c *callCtx) finish() bool {
	stopped := c.timer.Stop()
	if c.stop != nil {
		stopped = c.stop() && stopped
		c.stop = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return stopped && c.err == nil
}

func (c *callCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		if c.in != nil {
			// halted first: the call may return as soon as the interpreter sees the stop, and
			// must then see that it was stopped.
			c.halted.Store(true)
			stopInterpreter(c.in)
		}
		close(c.done)
	}
}

// stopped reports whether the interpreter has been stopped (it is then discarded).
func (c *callCtx) stopped() bool { return c.halted.Load() }

// Cancel stops the current call (the depth guard uses it).
func (c *callCtx) Cancel() { c.cancel(context.Canceled) }

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *callCtx) Done() <-chan struct{}       { return c.done }
func (c *callCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
func (c *callCtx) Value(key any) any {
	if c.parent == nil { // between calls
		return nil
	}
	return c.parent.Value(key)
}
