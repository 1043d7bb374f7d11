package compute

import "encoding/json"

type jsonItem struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Score float64           `json:"score"`
	Attrs map[string]string `json:"attrs"`
}

// JSONRoundTrip encodes a list of 20 records and decodes it back, n times: reflection,
// allocation and strings, the everyday work of a generated tool.
func JSONRoundTrip(n int) int {
	items := make([]jsonItem, 20)
	for i := range items {
		items[i] = jsonItem{ID: i, Name: "item-" + string(rune('a'+i)), Tags: []string{"x", "yy", "zzz"},
			Score: float64(i) * 1.5, Attrs: map[string]string{"k": "v", "color": "blue"}}
	}
	sum := 0
	for r := 0; r < n; r++ {
		items[r%len(items)].ID = r
		b, err := json.Marshal(items)
		if err != nil {
			return -1
		}
		var back []jsonItem
		if err := json.Unmarshal(b, &back); err != nil {
			return -1
		}
		sum += len(b) + back[r%len(back)].ID
	}
	return sum
}
