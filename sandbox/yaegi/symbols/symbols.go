// Package symbols holds the generated yaegi symbol tables of the packages sandboxed code may
// import. Nothing here is hand-written but this file, copy.go, gen/ and what the generated
// tables call instead of the standard library's own (tz.go: the guest's time zone, and
// internal/json its json.Decoder; scanner.go: text/scanner's error output; state.go: fmt's State
// for guest Format methods; syntax.go: regexp/syntax's shared runes): review the generated diff
// like code. No table exports a host variable by address or shares a mutable value: package
// variables are either immutable values or, in Copies, copied per interpreter (see gen/main.go,
// noHostState, and symbols_test.go, which checks every symbol).
package symbols

//go:generate go run ./gen

import "reflect"

// Symbols maps "import/path/name" to the package's exported symbols, as yaegi's interp.Use wants.
var Symbols = map[string]map[string]reflect.Value{}
