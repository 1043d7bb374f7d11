// args: [["bb", "a", "ccc"]]
// want: ["ccc", "bb", "a"]
package artifact

import "slices"

func Longest(xs []string) []string {
	slices.SortFunc(xs, func(a, b string) int { return len(b) - len(a) })
	return xs
}
