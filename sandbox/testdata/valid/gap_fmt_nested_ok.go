// args: []
// want: ["&{5}", "[1]"]
package artifact

// Not refused: a pointer to a struct without such fields, and %d (which Go formats without the
// method).

import "fmt"

type tag int

func (t tag) String() string { return fmt.Sprintf("<%d>", int(t)) }

type holder struct{ T tag }

type plain struct{ N int }

func Show() []string {
	return []string{fmt.Sprint(&plain{5}), fmt.Sprintf("%d", []tag{1})}
}
