// args: []
// timeout: 300ms
// kind: deadline
package artifact

func Spin() int {
	n := 0
	for {
		n++
	}
}
