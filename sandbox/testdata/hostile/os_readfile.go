// args: []
// kind: policy
// contains: import "os"
package artifact

import "os"

func Read() (string, error) {
	b, err := os.ReadFile("/etc/passwd")
	return string(b), err
}
