// args: []
// want: [true, 2]
package artifact

type point struct{ x, y int }

func Cmp() []any {
	seen := map[point]int{}
	seen[point{1, 2}]++
	seen[point{1, 2}]++
	return []any{point{1, 2} == point{1, 2}, seen[point{1, 2}]}
}
