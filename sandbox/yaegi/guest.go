package yaegi

import (
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// Guest values stay in the guest. A value the artifact made (a returned error, a result, a panic
// value) may have methods written by the model: Error, String, Format, MarshalJSON, MarshalText,
// Unwrap, Is, As. Calling one on a host goroutine runs model code outside the call's deadline and
// outside any recover, so a method that panics kills the host and one that loops hangs it. So
// these values are reduced to plain strings and bytes by the slot functions below, which the
// generated stub calls, and instance.call's recover calls, during the call (on the goroutine
// running it, under its deadline, before the host looks at the outcome): a loop in a method is
// stopped by the call's context like any other loop, a panic is recovered here (or by
// instance.call) and becomes the call's error. Only strings and []byte reach the host. Where a guest value still reaches the host (a panic escaping everything, e.g. in a
// package initializer), it is described by its type only (see hostDescribe).

// setErr is forge__slot.SetErr: the function returned a non-nil error; keep its text.
func (s *slot) setErr(err error) {
	s.hasErr = true
	defer func() {
		if r := recover(); r != nil {
			s.fail(sandbox.KindPanic, "the returned error's Error method panicked: "+describe(r))
			s.failed.Hint = "Error() must return a string for every value, nil receivers included"
		}
	}()
	s.errText = err.Error()
}

// encode is forge__slot.Encode: the result as JSON (MarshalJSON and MarshalText methods run here).
func (s *slot) encode(v any) {
	defer func() {
		if r := recover(); r != nil {
			s.fail(sandbox.KindPanic, "encoding the result panicked (in a MarshalJSON or MarshalText method): "+describe(r))
			s.failed.Hint = "MarshalJSON must return JSON or an error, never panic; or return plain values"
		}
	}()
	b, err := json.Marshal(v)
	if err != nil {
		// The text is taken here: a MarshalerError's text is the guest method's error text.
		s.failed = &sandbox.Error{Kind: sandbox.KindResult, Message: "encode result: " + err.Error(),
			Hint: "return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers; MarshalJSON must succeed)"}
		return
	}
	s.outJSON = b
}

// recovered is called by instance.call's deferred recover: a panic no guest code recovered
// becomes the call's error here, still during the call (under its deadline), and the
// interpreter is discarded.
func (s *slot) recovered(r any) {
	if r == nil {
		return
	}
	if se, ok := r.(*sandbox.Error); ok && se != nil {
		s.failed = se // raised by the sandbox itself (host API)
		return
	}
	msg := describe(r)
	s.fail(sandbox.KindPanic, "panic: "+msg)
	if strings.Contains(msg, "using unaddressable value") {
		s.failed.Hint = "package variables (io.EOF, base64.StdEncoding, ...) cannot be assigned here: use a variable of your own"
	}
}

func (s *slot) fail(k sandbox.Kind, msg string) {
	if s.failed == nil {
		s.failed = &sandbox.Error{Kind: k, Message: msg}
	}
}

// describe formats a guest value (during a call only, see the comment at the top). fmt recovers a panicking Error or
// String method itself; a second panic while printing the first one is caught here.
func describe(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = "a value of type " + typeName(v) + " (its Error or String method panicked)"
		}
	}()
	return fmt.Sprint(v)
}

// typeName names v's dynamic type without calling any of its methods.
func typeName(v any) string {
	if rv, ok := v.(reflect.Value); ok {
		if !rv.IsValid() {
			return "nil"
		}
		return rv.Type().String()
	}
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// hostDescribe describes, on a host goroutine, a panic value that escaped the guest: plain
// strings, numbers and booleans are printed, runtime errors (whose Error the Go runtime
// implements) give their text; anything else is named by its type only, since its methods are
// model code.
func hostDescribe(v any) string {
	rv, ok := v.(reflect.Value)
	if !ok {
		rv = reflect.ValueOf(v)
	}
	if !rv.IsValid() {
		return "nil"
	}
	if _, isErr := v.(runtime.Error); isErr && fromRuntime(rv.Type()) {
		return v.(runtime.Error).Error()
	}
	if rv.Type().NumMethod() == 0 { // no method that could run model code
		switch rv.Kind() {
		case reflect.String:
			return rv.String()
		case reflect.Bool:
			return strconv.FormatBool(rv.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return strconv.FormatInt(rv.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return strconv.FormatUint(rv.Uint(), 10)
		case reflect.Float32, reflect.Float64:
			return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
		}
	}
	return "a value of type " + rv.Type().String() + " (its methods are not called outside the sandbox)"
}

// fromRuntime reports whether t (or what it points to) is a type of package runtime.
func fromRuntime(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == "runtime"
}

// copyRef is a mutable package variable a program references (see symbols.Copies).
type copyRef struct {
	pkg, name string
	hostVar   any // pointer to the host's variable: only ever copied
}

// referencedCopies lists the mutable package variables whose names occur as identifiers in the
// code (as pkg.Name, or bare): only those are copied into the program's interpreters, so programs
// that use no unicode table pay nothing for them. Over-approximating is harmless (a copy too many).
func referencedCopies(code ...string) []copyRef {
	names := map[string]bool{}
	for _, c := range code {
		var sc scanner.Scanner
		fset := token.NewFileSet()
		sc.Init(fset.AddFile("", -1, len(c)), []byte(c), nil, 0)
		for {
			_, tok, lit := sc.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.IDENT {
				names[lit] = true
			}
		}
	}
	var refs []copyRef
	for pkg, vars := range symbols.Copies {
		for name, p := range vars {
			if names[name] {
				refs = append(refs, copyRef{pkg: pkg, name: name, hostVar: p})
			}
		}
	}
	return refs
}

// checkWrite is forge__slot.CheckWrite: the rewrite calls it (see guardWrites) before guest
// code writes through a pointer to a package's type (*loc = ...). Writing a host-owned value
// fails the call as a policy violation, even if the code recovers the panic.
func (s *slot) checkWrite(p any) {
	if symbols.HostOwned(p) { // time.UTC, time.Local, the guest's and time's shared zones
		s.failed = &sandbox.Error{Kind: sandbox.KindPolicy, Message: fmt.Sprintf("write through a %T shared with the host", p),
			Hint: "copy the value into a variable of your own (l := *loc) and change the copy"}
		panic(s.failed)
	}
}
