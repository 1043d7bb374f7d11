// want: 7
package artifact

import "encoding/json"

type Base struct {
	ID int `json:"id"`
}

type Item struct {
	*Base
	Name string `json:"name"`
}

func Decode() (int, error) {
	var it Item
	if err := json.Unmarshal([]byte(`{"id": 7, "name": "x"}`), &it); err != nil {
		return 0, err
	}
	return it.ID, nil
}
