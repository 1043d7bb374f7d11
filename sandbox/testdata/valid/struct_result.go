// args: ["ada", 36]
// want: {"name": "ada", "age": 36, "adult": true}
package artifact

type Person struct {
	Name  string `json:"name"`
	Age   int    `json:"age"`
	Adult bool   `json:"adult"`
}

func NewPerson(name string, age int) Person {
	return Person{Name: name, Age: age, Adult: age >= 18}
}
