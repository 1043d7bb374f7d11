// args: []
// kind: compile
// contains: %+v of p, a struct type of the file
// stage: compile
// backends: yaegi
package artifact

// %+v (and %#v, %T) of a struct type of the file: yaegi v0.16.1 prints its own field and type
// names ("{Xx:1 Xy:2}", "struct { Xx int; Xy int }"). Refused with a hint on yaegi; wasm answers
// "{x:1 y:2}".

import "fmt"

type point struct{ x, y int }

func Show() string {
	p := point{1, 2}
	return fmt.Sprintf("%+v", p)
}
