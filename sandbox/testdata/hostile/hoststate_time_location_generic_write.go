// args: []
// kind: policy|compile
// backends: yaegi
package artifact

import "time"

func set[T any](p *T, v T) { *p = v }

// Shift writes the host's UTC location through a generic helper, whose *T the rewrite cannot
// see is a package's type: the write is checked all the same (policy). yaegi v0.16.1's compiler
// currently panics on this generic write (which killed the host before issue 8): compile.
func Shift() string {
	set(time.Unix(0, 0).UTC().Location(), *time.FixedZone("EVIL", 3600))
	return time.Unix(0, 0).UTC().Format(time.RFC3339)
}
