// args: []
// kind: policy
package artifact

import "plugin"

func Load() error {
	_, err := plugin.Open("/tmp/x.so")
	return err
}
