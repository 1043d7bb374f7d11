package registry

import (
	"bytes"
	"os"
)

// overBound makes the store file at p valid JSON over MaxFileBytes (white space after it): read
// whole, it would cost that much memory before anything checked it.
func overBound(p string) {
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	b = append(b, bytes.Repeat([]byte(" "), MaxFileBytes+1-len(b))...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		panic(err)
	}
}
