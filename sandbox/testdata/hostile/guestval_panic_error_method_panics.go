// args: []
// kind: panic
package artifact

type bad struct{}

func (bad) Error() string {
	var e error = bad{}
	panic(e)
}

// Boom panics with an error whose Error method panics with itself.
func Boom() int {
	var e error = bad{}
	panic(e)
}
