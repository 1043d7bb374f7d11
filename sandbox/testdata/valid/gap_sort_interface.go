// args: [[3, 1, 2]]
// want: [3, 2, 1]
package artifact

import "sort"

type desc []int

func (d desc) Len() int           { return len(d) }
func (d desc) Less(i, j int) bool { return d[i] > d[j] }
func (d desc) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }

func Sort(xs []int) []int {
	sort.Sort(desc(xs))
	return xs
}
