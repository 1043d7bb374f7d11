// args: [["b", "a"]]
// isolation: process
// backends: yaegi
// caps: {"log": true}
// want: ["a", "b"]
package artifact

import (
	"forge/host"
	"slices"
)

func Sorted(xs []string) []string {
	host.Log("sorting")
	slices.Sort(xs)
	return xs
}
