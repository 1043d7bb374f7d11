// args: ["{\"items\": [1, 2, 3]}"]
// want: 6
package artifact

import "encoding/json"

func Total(doc string) (int, error) {
	var d struct {
		Items []int `json:"items"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return 0, err
	}
	t := 0
	for _, x := range d.Items {
		t += x
	}
	return t, nil
}
