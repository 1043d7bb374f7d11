// args: []
// want: [10, "recovered: boom", true, [3, 2], "base-derived"]
package artifact

import "fmt"

type base struct{}

func (base) name() string    { return "base" }
func (b base) hello() string { return b.name() }

type derived struct{ base }

func (derived) name() string { return "derived" }

type key struct {
	a [2]int
	s string
}

func safe() (res string) {
	defer func() {
		if r := recover(); r != nil {
			res = fmt.Sprint("recovered: ", r)
		}
	}()
	panic("boom")
}

func double() (n int) {
	defer func() { n *= 2 }()
	return 5
}

func Misc() []any {
	m := map[key]bool{{[2]int{1, 2}, "x"}: true}
	a := []int{1, 2, 3}
	b := a[:2]
	b = append(b, 9)
	_ = b
	c := make([]int, 2)
	copy(c, a[1:])
	c[0], c[1] = c[1], c[0]
	d := derived{}
	return []any{double(), safe(), m[key{[2]int{1, 2}, "x"}], []int{a[2] - 6, a[1]}, d.hello() + "-" + d.name()}
}
