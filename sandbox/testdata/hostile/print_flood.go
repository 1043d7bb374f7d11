// args: []
// timeout: 300ms
// kind: deadline
package artifact

import "fmt"

func Flood() int {
	for {
		fmt.Println("flood flood flood flood flood flood flood flood")
	}
}
