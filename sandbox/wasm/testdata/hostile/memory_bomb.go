// args: []
// memory: 128MB
// timeout: 10s
// kind: memory
package artifact

func Grow() int {
	var chunks [][]byte
	for i := 0; ; i++ {
		chunks = append(chunks, make([]byte, 8<<20))
		chunks[i][0] = 1
	}
}
