// args: []
// kind: policy
package artifact

import "os"

func Start() error {
	_, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "id"}, &os.ProcAttr{})
	return err
}
