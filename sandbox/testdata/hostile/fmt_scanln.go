// args: []
// kind: policy
package artifact

import "fmt"

func Read() string {
	var s string
	fmt.Scanln(&s)
	return s
}
