// args: []
// kind: panic|deadline
package artifact

type slow struct{ n *int }

func (s slow) Error() string {
	for {
		*s.n++
	}
}

var x = boom()

func boom() int {
	n := 0
	var e error = slow{&n}
	panic(e)
}

// Get is never reached: the package initializer panics with an error whose Error never returns.
func Get() int { return x }
