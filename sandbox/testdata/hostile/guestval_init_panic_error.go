// args: []
// kind: panic
package artifact

type bad struct{}

func (bad) Error() string { panic("init error text exploded") }

var x = boom()

func boom() int {
	var e error = bad{}
	panic(e)
}

// Get is never reached: the package initializer panics with a bad error.
func Get() int { return x }
