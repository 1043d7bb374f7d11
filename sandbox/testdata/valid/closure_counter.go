// args: [5]
// want: 5
package artifact

func Count(n int) int {
	c := 0
	inc := func() { c++ }
	for i := 0; i < n; i++ {
		inc()
	}
	return c
}
