// args: []
// kind: panic
package artifact

type bad struct{}

func (bad) Error() string { panic("error text exploded") }

// Fail returns an error whose Error method panics: the host must not call it.
func Fail() error { return bad{} }
