// args: []
// kind: panic
package artifact

func Set() int {
	var m map[string]int
	m["a"] = 1
	return 1
}
