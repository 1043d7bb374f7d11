// args: []
// kind: policy
package artifact

import "os/exec"

func Run() (string, error) {
	out, err := exec.Command("id").Output()
	return string(out), err
}
