// args: [90]
// kind: compile
// contains: method expression time.Time.Add used as a value
// stage: compile
// backends: yaegi
package artifact

// A value-receiver method expression of a package's type: yaegi v0.16.1 reports a wrong type
// error (cannot use type time.Time as type time.Duration). Refused on yaegi; wasm answers 1970.

import "time"

func Year(minutes int) int {
	add := time.Time.Add
	return add(time.Unix(0, 0).UTC(), time.Duration(minutes)*time.Minute).Year()
}
