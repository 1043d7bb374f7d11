// want: true
package artifact

type myErr struct{ msg string }

func (e *myErr) Error() string { return e.msg }

func find(ok bool) error {
	var p *myErr
	if !ok {
		p = &myErr{"missing"}
	}
	return p
}

func NonNil() bool { return find(true) != nil }
