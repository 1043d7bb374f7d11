// args: []
// timeout: 300ms
// kind: deadline|panic
package artifact

type slow struct{ n *int }

func (s slow) Error() string {
	for {
		*s.n++
	}
}

// Boom panics with an error whose Error method never returns (yaegi v0.16.1 hands the bare
// struct to the recover, so the loop is only reached by code that calls Error: never the host).
func Boom() int {
	n := 0
	var e error = slow{&n}
	panic(e)
}
