// Package symbols holds the generated yaegi symbol tables of the packages sandboxed code may
// import. Nothing here is hand-written but this file and gen/: review the generated diff like code.
package symbols

//go:generate go run ./gen

import "reflect"

// Symbols maps "import/path/name" to the package's exported symbols, as yaegi's interp.Use wants.
var Symbols = map[string]map[string]reflect.Value{}
