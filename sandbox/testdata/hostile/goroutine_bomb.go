// args: []
// kind: policy
// contains: go statement
package artifact

func Bomb() int {
	for {
		go func() {
			for {
			}
		}()
	}
}
