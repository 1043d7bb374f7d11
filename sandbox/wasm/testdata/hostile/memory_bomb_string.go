// args: []
// memory: 64MB
// timeout: 10s
// kind: memory
package artifact

func Double() int {
	s := "x"
	for {
		s += s
	}
}
