// args: [["pear", "fig", "banana"]]
// want: ["fig", "pear", "banana"]
package artifact

import "sort"

func ByLen(xs []string) []string {
	sort.SliceStable(xs, func(i, j int) bool { return len(xs[i]) < len(xs[j]) })
	return xs
}
