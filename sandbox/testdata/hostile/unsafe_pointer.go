// args: []
// kind: policy
package artifact

import "unsafe"

func Peek() uintptr {
	x := 1
	return uintptr(unsafe.Pointer(&x))
}
