// args: []
// kind: policy
// contains: package-level type _ is not allowed
package artifact

// The interpreter cannot compile a package-level type named _ and go build can: the gate refuses
// it so that both backends give the same verdict.
type _ struct{ _ int }

func F() int { return 1 }
