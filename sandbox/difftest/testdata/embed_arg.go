// args: [{"id": 4, "name": "y"}]
// want: 4
package artifact

type base struct {
	ID int `json:"id"`
}

type Item struct {
	base
	Name string `json:"name"`
}

func ID(it Item) int { return it.ID }
