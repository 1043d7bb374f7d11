// args: []
// want: [3, "b"]
package artifact

import "sort"

func Top() []any {
	items := []struct {
		name  string
		score int
	}{{"a", 1}, {"b", 3}, {"c", 2}}
	sort.Slice(items, func(i, j int) bool { return items[i].score > items[j].score })
	return []any{items[0].score, items[0].name}
}
