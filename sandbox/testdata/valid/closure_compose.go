// args: [3]
// want: 8
package artifact

func Compose(x int) int {
	double := func(v int) int { return v * 2 }
	plus := func(f func(int) int, k int) func(int) int { return func(v int) int { return f(v) + k } }
	return plus(double, 2)(x)
}
