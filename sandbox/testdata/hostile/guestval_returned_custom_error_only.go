// args: []
// kind: returned
// contains: value receiver
package artifact

type myErr struct{ s string }

func (e myErr) Error() string { return e.s }

// Fail returns an error type declared in the file, by value.
func Fail() error { return myErr{"value receiver"} }
