// want: "{\"id\":3,\"name\":\"x\"}"
package artifact

import "encoding/json"

type base struct {
	ID int `json:"id"`
}

type Item struct {
	base
	Name string `json:"name"`
}

func Marshal() (string, error) {
	b, err := json.Marshal(Item{base: base{ID: 3}, Name: "x"})
	return string(b), err
}
