// want: [true, true]
package artifact

type errs []string

func (e errs) Error() string { return "errors" }

func check(fail bool) error {
	var e errs
	if fail {
		e = append(e, "x")
	}
	return e
}

func Both() []bool {
	var p *errs
	var err error = p
	return []bool{check(false) != nil, err != nil}
}
