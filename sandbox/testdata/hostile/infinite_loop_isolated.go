// args: []
// isolation: process
// backends: yaegi
// timeout: 300ms
// kind: deadline
package artifact

func Spin() int {
	for {
	}
}
