// want: {"id": 3, "name": "x"}
package artifact

type base struct {
	ID int `json:"id"`
}

type Item struct {
	base
	Name string `json:"name"`
}

func Get() Item { return Item{base: base{ID: 3}, Name: "x"} }
