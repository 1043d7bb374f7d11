// args: []
// kind: policy
package artifact

import "io"

func Block() error {
	r, w := io.Pipe()
	_, err := w.Write([]byte("x"))
	_ = r
	return err
}
