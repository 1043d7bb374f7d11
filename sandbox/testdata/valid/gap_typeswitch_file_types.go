// args: []
// want: [1, 3, 4, 5, 6, 7, 8, 9, "nil"]
package artifact

// Type switches with cases of the file's types. yaegi v0.16.1 skipped a value type with methods
// when no variable is bound, a pointer type with methods when one is, and every file type on an
// error: [3, 6, 7, 9, "nil"]. The rewrite turns them into comma-ok assertions in order.

type valStr struct{ code int }

func (e valStr) String() string { return "bad" }

type str struct{ code int }

func (e *str) String() string { return "s" }

type codeErr struct{ code int }

func (e *codeErr) Error() string { return "bad" }

func mk() error { return &codeErr{8} }

func classify(x any) string {
	switch x.(type) {
	case nil:
		return "nil"
	case int, string:
		return "basic"
	}
	return "other"
}

func Switches() []any {
	r := []any{}
	var c any = valStr{1}
	switch c.(type) {
	case valStr:
		r = append(r, 1)
	}
	switch v := c.(type) {
	case *str:
		r = append(r, -1)
	case valStr:
		r = append(r, v.code+2)
	}
	var a any = &str{4}
	switch v := a.(type) {
	case int:
		r = append(r, -1)
	case *str:
		r = append(r, v.code)
	}
	switch v := a.(type) {
	case int, *str:
		if _, ok := v.(*str); ok {
			r = append(r, 5)
		}
	}
	for i := 0; i < 2; i++ {
		switch a.(type) {
		case *str:
			if i == 0 {
				break
			}
			r = append(r, 6)
		default:
			r = append(r, -1)
		}
	}
	switch v := a.(type) {
	case valStr:
		r = append(r, -1)
	default:
		_ = v
		r = append(r, 7)
	}
	switch e := mk().(type) {
	case *codeErr:
		r = append(r, e.code)
	}
	if e, ok := mk().(*codeErr); ok {
		r = append(r, e.code+1)
	}
	return append(r, classify(nil))
}
