// args: []
// kind: memory
// timeout: 10s
package artifact

func Fill() int {
	m := map[int][]int{}
	for i := 0; ; i++ {
		m[i] = make([]int, 1024)
	}
}
