// args: []
// kind: compile
// contains: which holds values of tag: the interpreter prints them without their String
// stage: compile
// backends: yaegi
package artifact

// fmt of a slice (map, struct) holding values of a type of the file with a String method: Go
// formats each through it ("[<1> <2>]"), yaegi v0.16.1 does not ("[1 2]"). Refused with a hint on
// yaegi; wasm answers ["[<1> <2>]"].

import "fmt"

type tag int

func (t tag) String() string { return fmt.Sprintf("<%d>", int(t)) }

type holder struct{ T tag }

type plain struct{ N int }

func Show() []string {
	return []string{fmt.Sprint([]tag{1, 2})}
}
