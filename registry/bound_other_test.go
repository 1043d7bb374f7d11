//go:build !unix

package registry

import "testing"

// notAFile: no named pipes here; a file over the bound stands in.
func notAFile(*testing.T) func(p string) { return overBound }
