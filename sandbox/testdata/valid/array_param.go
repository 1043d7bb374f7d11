// args: [[1, 2, 3]]
// want: 6
package artifact

func Sum3(a [3]int) int { return a[0] + a[1] + a[2] }
