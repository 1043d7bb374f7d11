// args: [3]
// want: [0, 1, 2]
package artifact

// A method value binds its receiver when it is taken: each iteration's b (yaegi v0.16.1 read the
// receiver when the value was called and gave [2, 2, 2]; the rewrite binds it).

type box struct{ v int }

func (b box) get() int { return b.v }

func Values(n int) []int {
	var fs []func() int
	for i := 0; i < n; i++ {
		b := box{i}
		fs = append(fs, b.get)
	}
	out := []int{}
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}
