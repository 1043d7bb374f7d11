// args: [0]
// want: -1
package artifact

func SafeDiv(x int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return 10 / x
}
