// args: []
// want: ["animal:rex", "dog:rex", 2]
package artifact

type animal struct{ name string }

func (a animal) describe() string { return "animal:" + a.name }
func (a *animal) rename(n string) { a.name = n }

type dog struct {
	animal
	legs int
}

func (d dog) bark() string { return "dog:" + d.name }

type describer interface{ describe() string }

func Promote() []any {
	d := &dog{animal{"x"}, 2}
	d.rename("rex")
	var i describer = d
	return []any{i.describe(), d.bark(), d.legs / 1}
}
