// args: []
// kind: policy
package artifact

import "io/ioutil"

func Read() ([]byte, error) { return ioutil.ReadFile("/etc/hosts") }
