// args: [[{"n": "a", "s": 3}, {"n": "b", "s": 9}]]
// want: "b"
package artifact

type Item struct {
	N string `json:"n"`
	S int    `json:"s"`
}

func Best(items []Item) string {
	best := items[0]
	for _, it := range items[1:] {
		if it.S > best.S {
			best = it
		}
	}
	return best.N
}
