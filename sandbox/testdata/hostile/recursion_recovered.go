// args: [0]
// timeout: 5s
// kind: depth
package artifact

func deep(n int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return deep(n+1) + 1
}

func Deep(n int) int { return deep(n) }
