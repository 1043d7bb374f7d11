// args: [null, 4]
// want: 4
package artifact

type Opt struct{ Scale int }

func Scale(o *Opt, x int) int {
	if o == nil {
		return x
	}
	return x * o.Scale
}
