// args: []
// isolation: process
// memory: 64MB
// timeout: 5s
// kind: memory
// stage: compile
// backends: yaegi
package artifact

var chunks [][]byte

// init grows past the cap 8 MiB at a time, touching every chunk.
func init() {
	for {
		c := make([]byte, 8<<20)
		for i := 0; i < len(c); i += 4096 {
			c[i] = 1
		}
		chunks = append(chunks, c)
	}
}

func F() int { return len(chunks) }
