// args: [3]
// kind: panic
package artifact

type bad struct{ n int }

func (b bad) Error() string { panic("deep error text exploded") }

// Down recurses (so the depth guard is in place) and panics with a bad error.
func Down(n int) int {
	if n == 0 {
		var e error = bad{n}
		panic(e)
	}
	return Down(n-1) + 1
}
