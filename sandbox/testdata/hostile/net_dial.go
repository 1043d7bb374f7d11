// args: []
// kind: policy
package artifact

import "net"

func Dial() error {
	_, err := net.Dial("tcp", "example.com:80")
	return err
}
